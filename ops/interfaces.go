package ops

import (
	"context"
	"time"

	"github.com/airlock-app/airlock/api"
)

// RunSpec is one command the ops flow asks a [Runner] to execute.
type RunSpec struct {
	// Command is what runs: argv executed directly, or a shell string run as `/bin/sh -c`.
	Command Command
	// Dir is the working directory (absolute, symlinks resolved).
	Dir string
	// Timeout ends the command (and every process it started) when it elapses.
	Timeout time.Duration
	// OutputCap is the most bytes of stdout, and separately of stderr, that are kept.
	OutputCap int
	// ReadOnly asks for a run that cannot write anywhere (diff, snapshot, verify).
	// Apply runs with ReadOnly false: writes allowed under the sandbox policy in force.
	ReadOnly bool
	// Network says the plan declared it needs the network. The runner grants it only
	// as far as the sandbox posture in force allows.
	Network bool
	// Purpose is "diff", "snapshot", "apply", "verify" or "confirm", for the runner's logs and policy.
	Purpose string
	// PlanID names the plan the run belongs to.
	PlanID string
	// Inputs are the approved copies of the input files the command names (apply, confirm,
	// snapshot: every command the approval covers). A runner must
	// run [RunSpec.CommandFor] with each copy placed where that command reads it, never
	// Command as it stands: the files in Dir may have been swapped since approval.
	Inputs []StagedInput
}

// RunResult is what a [Runner] reports about a command that started.
type RunResult struct {
	ExitCode  int    // the exit status; -1 when ended by a signal or the timeout
	Stdout    []byte // at most RunSpec.OutputCap bytes
	Stderr    []byte // at most RunSpec.OutputCap bytes
	Truncated bool   // output beyond the cap was dropped
	TimedOut  bool   // the timeout ended the command
	Duration  time.Duration
}

// Runner executes commands. The app backs it with sandbox.Exec so that apply runs under
// the sandbox policy in force and read-only runs cannot write; [LocalRunner] is a fallback
// that runs on the host without confinement.
//
// Run returns an error only when the command could not be started or was refused; a
// command that ran and failed is reported through RunResult.ExitCode and TimedOut.
type Runner interface {
	Run(ctx context.Context, spec RunSpec) (RunResult, error)
}

// KeySource hands out the journal's HMAC key (at least 32 bytes), kept in the secret store
// (the OS keyring, or the file store chosen by `[secrets] store = "file"`).
// It creates the key the first time; see [StoredKeySource].
type KeySource interface {
	JournalKey(ctx context.Context) ([]byte, error)
}

// Publisher receives the package's events. The app's event bus implements it.
type Publisher interface {
	Publish(topic string, payload any)
}

// Event topics published by the package: api's, with api's payload types.
const (
	TopicPlanUpdated     = api.TopicOpsPlanUpdated     // payload PlanEvent
	TopicJournalAppended = api.TopicOpsJournalAppended // payload JournalEvent
)

// PlanEvent is the payload of [TopicPlanUpdated].
type PlanEvent = api.OpsPlanUpdated

// JournalEvent is the payload of [TopicJournalAppended].
type JournalEvent = api.OpsJournalAppended

type noPublisher struct{}

func (noPublisher) Publish(string, any) {}
