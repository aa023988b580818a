package permission

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// GrantRecord is a remembered P1 allow: a tool and a pattern, for one session or always
// within a department (or, outside departments, a workspace).
type GrantRecord struct {
	ID         string `gorm:"primaryKey"`
	Tool       string `gorm:"index;not null"`
	Pattern    string `gorm:"not null"`
	Scope      Scope  `gorm:"not null"` // session | always
	Session    string `gorm:"index"`
	Department string `gorm:"index"`
	Workspace  string
	CreatedBy  string // window | tray | cli-tty | api
	RequestID  string // the request whose answer created it
	CreatedAt  time.Time
	RevokedAt  *time.Time `gorm:"index"`
}

// TableName keeps the table name stable and namespaced.
func (GrantRecord) TableName() string { return "permission_grants" }

// PendingRecord is a request waiting for a person; it survives a restart.
type PendingRecord struct {
	ID              string `gorm:"primaryKey"`
	Tool            string `gorm:"not null"`
	Subject         string
	RequestJSON     string `gorm:"not null"`
	DecisionJSON    string `gorm:"not null"` // the pipeline's ask decision (tier, kind, reasons)
	Tier            Tier
	Kind            Kind
	InteractiveOnly bool
	Status          string `gorm:"index;not null"` // pending | answered | expired | timed_out | cancelled
	AnswerJSON      string // the final decision once answered
	CallerPID       int
	CreatedAt       time.Time
	Deadline        *time.Time
	UpdatedAt       time.Time
}

// TableName keeps the table name stable and namespaced.
func (PendingRecord) TableName() string { return "permission_pending" }

// Pending statuses.
const (
	StatusPending   = "pending"
	StatusAnswered  = "answered"
	StatusExpired   = "expired"
	StatusTimedOut  = "timed_out"
	StatusCancelled = "cancelled"
)

// AuditRecord is one decision: who asked, what, which layer decided, how long it waited,
// who answered.
type AuditRecord struct {
	ID              uint   `gorm:"primaryKey"`
	RequestID       string `gorm:"index"`
	Tool            string `gorm:"index"`
	Subject         string // credentials redacted
	Tier            Tier
	Verdict         Verdict `gorm:"index"`
	Layer           Layer
	Kind            Kind
	InteractiveOnly bool
	Reasons         string // JSON array
	Rule            string
	Session         string
	Run             string `gorm:"index"`
	Task            string
	Department      string
	Cwd             string
	AskedBy         string // the caller's description and pid
	AnsweredBy      string
	WaitedMs        int64
	CreatedAt       time.Time `gorm:"index"`
}

// TableName keeps the table name stable and namespaced.
func (AuditRecord) TableName() string { return "permission_audit" }

// Migrate creates or updates the permission tables.
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&GrantRecord{}, &PendingRecord{}, &AuditRecord{}); err != nil {
		return fmt.Errorf("migrate permission tables: %w", err)
	}
	return nil
}
