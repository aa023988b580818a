package sandboxexec

import "github.com/airlock-app/airlock/permission/preflight/vmrisk"

// Where a command runs.
const (
	WhereHost    = "host"
	WhereMicroVM = "micro-VM"
)

// Route is the execution-mode decision for one command: where it runs and why.
type Route struct {
	RunID   uint
	Command string // the command line as the classifier saw it
	Cwd     string
	Mode    string // the run's execution_mode: local | sandbox | auto
	Where   string // WhereHost or WhereMicroVM
	Reason  string // e.g. "auto: package install `pip install x`"
	// Asked is set when auto met a high-risk command without a ready micro-VM and asked
	// the person; AnsweredBy says who allowed running it on the host.
	Asked      bool
	AnsweredBy string
}

// LogLine is the line written into the run's log.
func (r Route) LogLine() string {
	if r.Where == WhereMicroVM {
		return "airlock: running in the micro-VM (" + r.Reason + ")"
	}
	return "airlock: running on the host (" + r.Reason + ")"
}

// Risk says why a command is high-risk for the auto execution mode (so it runs in the
// micro-VM), or "" when it may run on the host; see vmrisk.Reason.
func Risk(cmdline, workspace, home string) string { return vmrisk.Reason(cmdline, workspace, home) }

func quoted(s string) string { return vmrisk.Quoted(s) }
