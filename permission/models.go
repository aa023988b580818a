package permission

import (
	"fmt"
	"time"

	"github.com/airlock-app/airlock/api"
	"gorm.io/gorm"
)

// GrantRecord is a remembered P1 allow: a tool and a pattern, for one session or always
// within a department (or, outside departments, a workspace).
type GrantRecord struct {
	// The row is the wire form; this type adds what only the database needs (the
	// table name, the redaction hooks of atrest.go).
	api.GrantRecord
}

// TableName keeps the table name stable and namespaced.
func (GrantRecord) TableName() string { return "permission_grants" }

// PendingRecord is a request waiting for a person; it survives a restart.
type PendingRecord struct {
	ID              string     `gorm:"primaryKey" json:"id"`
	Tool            string     `gorm:"not null" json:"tool"`
	Subject         string     `json:"subject"`
	RequestJSON     string     `gorm:"not null" json:"request"`
	DecisionJSON    string     `gorm:"not null" json:"decision"` // the pipeline's ask decision (tier, kind, reasons)
	Tier            Tier       `json:"tier"`
	Kind            Kind       `json:"kind"`
	InteractiveOnly bool       `json:"interactive_only"`
	Status          string     `gorm:"index;not null" json:"status"` // pending | answered | delivered | expired | timed_out | cancelled
	AnswerJSON      string     `json:"answer"`                       // the final decision once answered
	CallerPID       int        `json:"caller_pid"`
	CreatedAt       time.Time  `json:"created_at"`
	Deadline        *time.Time `json:"deadline"`
	UpdatedAt       time.Time  `json:"updated_at"`
	AskedParams     string     `json:"asked_params,omitempty"` // the params as asked, when a before_tool_use hook rewrote them (RequestJSON has the rewrite); "" otherwise
}

// TableName keeps the table name stable and namespaced.
func (PendingRecord) TableName() string { return "permission_pending" }

// Pending statuses.
const (
	StatusPending   = "pending"
	StatusAnswered  = "answered"  // answered while no caller waited: the next Await with its ID gets the answer once
	StatusDelivered = "delivered" // the answer reached its caller
	StatusExpired   = "expired"
	StatusTimedOut  = "timed_out"
	StatusCancelled = "cancelled"
)

// AuditRecord is one decision: who asked, what, which layer decided, how long it waited,
// who answered.
type AuditRecord struct {
	// The row is the wire form; this type adds what only the database needs.
	api.AuditRecord
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
