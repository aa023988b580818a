package departments

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Department status values.
const (
	StatusOK      = "ok"
	StatusMissing = "missing"
	// StatusRefused is a workspace root that became a symbolic link or leads elsewhere
	// than when it was configured: it makes nothing known until the config names a real directory.
	StatusRefused = "refused"
)

// Department is a named directory with defaults for the tasks that run in it.
type Department struct {
	ID   uint   `gorm:"primaryKey" json:"id"`
	Name string `gorm:"uniqueIndex;not null" json:"name"`
	// Directory is the resolved (symlink-free, absolute) directory.
	Directory string   `gorm:"not null" json:"directory"`
	Defaults  Defaults `gorm:"embedded;embeddedPrefix:default_" json:"defaults"`
	// Status is ok, or missing when the directory vanished (removed or renamed).
	Status       string    `gorm:"not null;default:ok" json:"status"`
	StatusReason string    `json:"status_reason,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// AuthorizedPlace is a directory the person authorized by name. Runs may start in it and
// below it. Revoking keeps the row (who/when) with RevokedAt set.
type AuthorizedPlace struct {
	ID           uint       `gorm:"primaryKey" json:"id"`
	Path         string     `gorm:"uniqueIndex;not null" json:"path"`
	By           string     `json:"by"`
	AuthorizedAt time.Time  `json:"authorized_at"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RevokedBy    string     `json:"revoked_by,omitempty"`
}

// Active reports whether the place is currently authorized.
func (p AuthorizedPlace) Active() bool { return p.RevokedAt == nil }

// Migrate creates or updates the departments tables.
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&Department{}, &AuthorizedPlace{}); err != nil {
		return fmt.Errorf("migrate departments: %w", err)
	}
	return nil
}
