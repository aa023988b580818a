package departments

import (
	"fmt"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
)

// Department status values.
const (
	StatusOK      = "ok"
	StatusMissing = "missing"
	// StatusRefused is a workspace root that became a symbolic link or leads elsewhere
	// than when it was configured: it makes nothing known until the config names a real directory.
	StatusRefused = "refused"
)

// Department is a named directory with defaults for the tasks that run in it (the
// wire's type, also the table's row).
type Department = api.Department

// AuthorizedPlace is a directory the person authorized by name (the wire's type, also
// the table's row). Runs may start in it and below it.
type AuthorizedPlace = api.AuthorizedPlace

// Migrate creates or updates the departments tables.
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&Department{}, &AuthorizedPlace{}); err != nil {
		return fmt.Errorf("migrate departments: %w", err)
	}
	return nil
}
