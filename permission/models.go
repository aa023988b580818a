package permission

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// GrantRecord is a remembered P1 allow: a tool and a pattern, for one session or always
// within a department (or, outside departments, a workspace).
type GrantRecord struct {
	ID         string     `gorm:"primaryKey" json:"id"`
	Tool       string     `gorm:"index;not null" json:"tool"`
	Pattern    string     `gorm:"not null" json:"pattern"`
	Scope      Scope      `gorm:"not null" json:"scope"` // session | always
	Session    string     `gorm:"index" json:"session"`
	Department string     `gorm:"index" json:"department"`
	Workspace  string     `json:"workspace"`
	CreatedBy  string     `json:"createdBy"` // window | tray | cli-tty | api
	RequestID  string     `json:"requestId"` // the request whose answer created it
	CreatedAt  time.Time  `json:"createdAt"`
	RevokedAt  *time.Time `gorm:"index" json:"revokedAt"`
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
	InteractiveOnly bool       `json:"interactiveOnly"`
	Status          string     `gorm:"index;not null" json:"status"` // pending | answered | delivered | expired | timed_out | cancelled
	AnswerJSON      string     `json:"answer"`                       // the final decision once answered
	CallerPID       int        `json:"callerPid"`
	CreatedAt       time.Time  `json:"createdAt"`
	Deadline        *time.Time `json:"deadline"`
	UpdatedAt       time.Time  `json:"updatedAt"`
	AskedParams     string     `json:"askedParams,omitempty"` // the params as asked, when a before_tool_use hook rewrote them (RequestJSON has the rewrite); "" otherwise
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
	ID              uint      `gorm:"primaryKey" json:"id"`
	RequestID       string    `gorm:"index" json:"requestId"`
	Tool            string    `gorm:"index" json:"tool"`
	Subject         string    `json:"subject"` // credentials redacted
	Tier            Tier      `json:"tier"`
	Verdict         Verdict   `gorm:"index" json:"verdict"`
	Layer           Layer     `json:"layer"`
	Kind            Kind      `json:"kind"`
	InteractiveOnly bool      `json:"interactiveOnly"`
	Reasons         string    `json:"reasons"` // JSON array
	Rule            string    `json:"rule"`
	Session         string    `json:"session"`
	Run             string    `gorm:"index" json:"run"`
	Task            string    `json:"task"`
	Department      string    `json:"department"`
	Cwd             string    `json:"cwd"`
	AskedBy         string    `json:"askedBy"` // the caller's description and pid
	AnsweredBy      string    `json:"answeredBy"`
	WaitedMs        int64     `json:"waitedMs"`
	CreatedAt       time.Time `gorm:"index" json:"createdAt"`
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
