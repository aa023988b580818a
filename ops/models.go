package ops

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// PlanRecord is a stored plan (table ops_plans). Spec holds the plan's content as JSON
// (after redaction of its free-text fields); Hash is its canonical sha256 computed when
// the plan was opened. Plans are never edited: a change is a new plan that supersedes.
type PlanRecord struct {
	ID           string `gorm:"primaryKey;size:40"`
	Project      string `gorm:"index;not null"`
	Hash         string `gorm:"size:64;not null"`
	Spec         string `gorm:"not null"`
	Status       Status `gorm:"index;size:20;not null"`
	Provider     string
	Account      string
	Region       string
	Device       string
	Intent       string
	Supersedes   string `gorm:"size:40"`
	SupersededBy string `gorm:"size:40"`
	CreatedBy    string
	ApplierPID   int `gorm:"column:applier_pid"` // the process running the apply while Status is applying
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// TableName is ops_plans.
func (PlanRecord) TableName() string { return "ops_plans" }

// ApprovalToken is a minted approval (table ops_approval_tokens). Only the sha256 of the
// token is stored. ExpiresAt and UsedAt are Unix nanoseconds (UsedAt NULL until redeemed)
// so that the redeeming UPDATE compares integers, not time strings.
type ApprovalToken struct {
	ID           uint   `gorm:"primaryKey"`
	TokenHash    string `gorm:"uniqueIndex;size:64;not null"`
	PlanID       string `gorm:"index;size:40;not null"`
	PlanHash     string `gorm:"size:64;not null"`
	ApplyHash    string `gorm:"size:64;not null"`
	SnapshotHash string `gorm:"size:64;not null"`
	WorkdirHash  string `gorm:"size:64;not null"`
	DiffSHA256   string `gorm:"column:diff_sha256;size:64;not null"`
	Inputs       string // JSON []InputDigest pinned at approval ("" when the plan has none)
	// WorkdirID is "device:inode" of the working directory when it was approved ("" for
	// approvals made before it was recorded).
	WorkdirID  string
	ApprovedBy string
	CreatedAt  int64 `gorm:"not null"`
	ExpiresAt  int64 `gorm:"not null"`
	UsedAt     *int64
	UsedBy     string
	RevokedAt  *int64 // set when the plan was rejected or superseded while the token was live
}

// TableName is ops_approval_tokens.
func (ApprovalToken) TableName() string { return "ops_approval_tokens" }

// Artifact kinds.
const (
	ArtifactDiff           = "diff"
	ArtifactSnapshotBefore = "snapshot_before"
	ArtifactSnapshotAfter  = "snapshot_after"
	ArtifactApplyOutput    = "apply_output"
	ArtifactVerify         = "verify"
	ArtifactConfirm        = "confirm"
)

// Artifact is evidence kept for a plan (table ops_artifacts): a diff, a snapshot, the
// apply's output, a verify assertion's output. Content is redacted and capped; SHA256 is
// the sha256 of the bytes as produced (a diff file as it is on disk), so the reviewed
// artifact can be checked against the original.
type Artifact struct {
	ID        uint   `gorm:"primaryKey"`
	PlanID    string `gorm:"index;size:40;not null"`
	Kind      string `gorm:"size:20;not null"`
	Source    string // the command (redacted) or the file path
	ExitCode  int
	TimedOut  bool
	Truncated bool
	Size      int64
	SHA256    string `gorm:"column:sha256;size:64;not null"`
	Content   string
	Inputs    string // for a diff: JSON []InputDigest of the plan's input files when it was made
	CreatedAt time.Time
}

// TableName is ops_artifacts.
func (Artifact) TableName() string { return "ops_artifacts" }

// JournalEntry is one row of the append-only journal (table ops_journal_entries).
// Hash is the sha256 of the entry's fixed serialization (see entryHash), chained through
// PrevHash; MAC is HMAC-SHA256 over Hash under the keyring key.
type JournalEntry struct {
	ID       uint   `gorm:"primaryKey"`
	Project  string `gorm:"uniqueIndex:idx_ops_journal_project_seq;not null"`
	Seq      int64  `gorm:"uniqueIndex:idx_ops_journal_project_seq;not null"`
	PlanID   string `gorm:"index;size:40"`
	Event    string `gorm:"index;size:40;not null"`
	Status   Status `gorm:"size:20"`
	Actor    string
	At       string `gorm:"not null"` // RFC 3339 with nanoseconds, UTC
	Detail   string // JSON, redacted
	PrevHash string `gorm:"size:64"`
	Hash     string `gorm:"size:64;not null"`
	MAC      string `gorm:"column:mac;size:64;not null"`
}

// TableName is ops_journal_entries.
func (JournalEntry) TableName() string { return "ops_journal_entries" }

// JournalHead records the last entry of each project's journal (table
// ops_journal_heads), authenticated, so that deleting the newest entries is detected.
type JournalHead struct {
	Project string `gorm:"primaryKey"`
	Seq     int64  `gorm:"not null"`
	Hash    string `gorm:"size:64;not null"`
	MAC     string `gorm:"column:mac;size:64;not null"`
}

// TableName is ops_journal_heads.
func (JournalHead) TableName() string { return "ops_journal_heads" }

// guards make SQLite itself refuse what the package never does: editing or deleting a
// journal entry, and editing a plan's content or hash. They stop mistakes and casual
// edits; someone who drops them is still caught by VerifyJournal and the plan hash.
var guards = []string{
	`CREATE TRIGGER IF NOT EXISTS ops_journal_no_update BEFORE UPDATE ON ops_journal_entries
	 BEGIN SELECT RAISE(ABORT, 'the ops journal is append-only'); END`,
	`CREATE TRIGGER IF NOT EXISTS ops_journal_no_delete BEFORE DELETE ON ops_journal_entries
	 BEGIN SELECT RAISE(ABORT, 'the ops journal is append-only'); END`,
	`CREATE TRIGGER IF NOT EXISTS ops_plans_immutable BEFORE UPDATE OF spec, hash, project ON ops_plans
	 BEGIN SELECT RAISE(ABORT, 'an ops plan is never edited: open a new plan that supersedes it'); END`,
}

// Migrate creates or updates the package's tables (and, on SQLite, the guards above).
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&PlanRecord{}, &ApprovalToken{}, &Artifact{}, &JournalEntry{}, &JournalHead{}); err != nil {
		return fmt.Errorf("migrate ops tables: %w", err)
	}
	if db.Dialector.Name() == "sqlite" {
		for _, g := range guards {
			if err := db.Exec(g).Error; err != nil {
				return fmt.Errorf("migrate ops guards: %w", err)
			}
		}
	}
	return nil
}
