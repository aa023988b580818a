package dispatch

import (
	"context"
	"io"
	"time"

	"github.com/airlock-app/airlock/sandbox"
)

// Executor runs one command under a policy. The app implements it with sandbox.Exec.
type Executor interface {
	// Exec runs spec.Argv and returns when the command and every process it started are
	// gone. Cancelling ctx must kill the whole process tree. A non-zero exit is not an error:
	// err is for failures to start (the binary is missing, the sandbox cannot be set up).
	Exec(ctx context.Context, spec ExecSpec) (ExecResult, error)
}

// ExecSpec is what the executor runs.
type ExecSpec struct {
	RunID uint
	Argv  []string
	// Dir is the resolved working directory; it is the run's writable root.
	Dir string
	// Env is the complete environment (KEY=VALUE), secrets included.
	Env    []string
	Policy Policy
	// Timeout is the hard limit (0: none); on expiry the tree is killed and TimedOut set.
	Timeout time.Duration
	Stdout  io.Writer
	Stderr  io.Writer
	// OnStart is called with the pid of the started process (the process-group leader).
	OnStart func(pid int)
	// Route is where the command runs as decided before the run started (execution_mode
	// auto with a Router); nil: the executor decides.
	Route *RoutePlan
	// Grant is the extra access a person allowed for this one run (an escalation):
	// exactly these paths writable or the network on, on top of Policy.
	Grant *sandbox.Grant
	// AllowHosts are allowlist rules this run gains under network_access = "allowlist"
	// (an agent task's model API), on top of the [network] lists; never written to the
	// configuration.
	AllowHosts []string
	// AgentDir is an agent task's run directory (its settings and home; "": none), and
	// AgentWritable the directories in it writable for this run, on top of Policy; the
	// rest of it is only read.
	AgentDir      string
	AgentWritable []string
}

// ExecResult is how a command ended.
type ExecResult struct {
	ExitCode int
	// Signal is the name of the signal that ended it ("" when it exited).
	Signal   string
	TimedOut bool
	// SandboxDenied is true when the command failed on a sandbox denial; Denial says what
	// was denied (write to a path, network, ...).
	SandboxDenied bool
	Denial        string
	// Grant is what would lift the denial (an escalation can offer it), or nil when no
	// grant can: then the run fails with the way out in Denial and nothing is asked.
	Grant *sandbox.Grant
	// Limit says which resource limit ended the run ("ended: the pids limit (512) was
	// reached …"), "" when none did.
	Limit string
}

// Approval request kinds.
const (
	// ApprovalCommand is a run's own command passing the broker as a bash/exec request.
	ApprovalCommand = "command"
	// ApprovalEscalation asks to re-run with more access after a sandbox denial.
	ApprovalEscalation = "isolation_escalation"
)

// ApprovalRequest is what dispatch asks the permission broker.
type ApprovalRequest struct {
	// ID is stable for one question of one run ("run-12", "run-12-escalation") so that a
	// restarted dispatcher re-attaches to the same pending request.
	ID string
	// Kind is ApprovalCommand or ApprovalEscalation.
	Kind string
	// Tool is "exec" with Argv as params (the broker's name for a run's own command).
	Tool string
	Argv []string
	// TaskArgv is the exact argv the person approved by creating the task: a command equal
	// to it is not asked again as P1 (P2 and interactive-only still ask).
	TaskArgv   []string
	RunID      uint
	Task       string
	Department string
	Cwd        string
	Policy     Policy
	// Denial and Grant are set for escalations: what the sandbox denied and the extra
	// access the re-run would get.
	Denial string
	Grant  *sandbox.Grant
	// OnPending is called (once) when the request waits for a person, before Await blocks.
	OnPending func(requestID string)
}

// ApprovalDecision is the broker's answer.
type ApprovalDecision struct {
	Allow     bool
	RequestID string
	Tier      string
	// Layer names the step that decided (task, tier, person, hook, ...).
	Layer   string
	Reasons []string
	// AnsweredBy says who answered (window, tray, policy, ...).
	AnsweredBy string
	// Grant is the extra access the person allowed with an escalation, for this run only.
	Grant *sandbox.Grant
	// Argv is the command the broker allowed: the request's, or the one a
	// before_tool_use hook rewrote it to. Empty: the request's own.
	Argv []string
}

// Approvals is the permission broker as dispatch sees it.
type Approvals interface {
	Await(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error)
}

// ApprovalOutcomes is implemented by an Approvals that is told how an allowed run's
// command ended (the broker gives it to its after_tool_use hooks, as for an agent's
// tool call). dispatch calls After once per executed command, after the run finished.
type ApprovalOutcomes interface {
	After(ctx context.Context, req ApprovalRequest, dec ApprovalDecision, out RunOutcome)
}

// RunOutcome is how an allowed command ended.
type RunOutcome struct {
	// Ran is true when the command started.
	Ran bool
	// ExitCode is set when the command exited by itself (not killed, not failed to start).
	ExitCode *int
	// Error says why the run did not succeed ("" when it did).
	Error string
	// SandboxDenied is true when it failed on a sandbox denial.
	SandboxDenied bool
}

// Secrets reads secret values (from the OS keyring).
type Secrets interface {
	Get(ctx context.Context, name string) (string, error)
}

// Publisher receives events (api's topics, each with its api payload type); the app's
// event bus implements it.
type Publisher interface {
	Publish(topic string, payload any)
}

// InboxApproval is a pending approval as the permission broker lists it.
type InboxApproval struct {
	ID          string    `json:"id"`
	Tool        string    `json:"tool"`
	Tier        string    `json:"tier"`
	Kind        string    `json:"kind,omitempty"`
	Summary     string    `json:"summary"`
	RunID       uint      `json:"run_id,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	// Deadline is when the request times out, if it does.
	Deadline *time.Time `json:"deadline,omitempty"`
	// InteractiveOnly requests need the window's popup or a TTY.
	InteractiveOnly bool `json:"interactive_only"`
}

// PendingApprovals lists the broker's pending requests (for the inbox).
type PendingApprovals interface {
	Pending() []InboxApproval
}

// Timer is the scheduler's timer; tests inject a fake one.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// NewRealTimer is the default timer factory.
func NewRealTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }
