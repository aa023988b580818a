package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/permission"
)

// gateVerdict is the start gate's answer for one start.
type gateVerdict struct {
	policy Policy
	// hold: the run waits for a person (waiting_directory).
	hold bool
	// fail: the run cannot start and holding would not help (under approval policy never).
	fail        bool
	reason      string
	waitingDir  string
	waitingDept string
	// dir is the resolved working directory.
	dir string
}

// gate decides, at every start and never from a cached answer, whether the run may start:
// its department must exist with its directory present, and its working directory must
// exist and be a known place. Under approval policy never nothing is held.
func (d *Dispatcher) gate(ctx context.Context, t Task, r Run) (gateVerdict, error) {
	v := gateVerdict{policy: d.opts.Defaults(t.Cwd)}
	var deptProblem, deptName string
	// profileProblem: a profile the department or the task names cannot be found; the
	// run fails rather than start under other settings.
	var profileProblem string
	if t.Department != "" {
		dep, err := d.depts.Get(ctx, t.Department)
		switch {
		case errors.Is(err, departments.ErrNotFound):
			deptProblem, deptName = fmt.Sprintf("department %s no longer exists: re-create it (`airlock dept add %s DIR`) or edit the task's department", t.Department, t.Department), t.Department
		case err != nil:
			return v, fmt.Errorf("gate: %w", err)
		default:
			var perr error
			if v.policy, perr = ApplyDefaults(v.policy, dep.Defaults, d.opts.Profile); perr != nil {
				profileProblem = fmt.Sprintf("department %s: %v", dep.Name, perr)
			}
			if dep.Status != departments.StatusOK {
				deptProblem, deptName = fmt.Sprintf("department %s is missing its directory: %s", dep.Name, dep.StatusReason), dep.Name
			}
		}
	}
	if p, perr := ApplyDefaults(v.policy, t.Overrides, d.opts.Profile); perr != nil {
		profileProblem = fmt.Sprintf("task %s: %v", t.Name, perr)
	} else {
		v.policy = p
	}
	if r.PolicyOverride != nil {
		v.policy = *r.PolicyOverride
	}
	never := v.policy.ApprovalPolicy == string(permission.PolicyNever)
	known, err := d.depts.Known(ctx, t.Cwd)
	if err != nil {
		return v, fmt.Errorf("gate: %w", err)
	}
	v.dir = known.Path
	switch {
	case profileProblem != "":
		// Fixing it is an edit of config.toml or of the task, not an authorization.
		v.reason, v.fail = profileProblem, true
		return v, nil
	case deptProblem != "" && !never:
		v.hold, v.reason, v.waitingDept, v.waitingDir = true, deptProblem, deptName, known.Path
	case !known.Exists:
		v.reason = fmt.Sprintf("working directory %s does not exist: create it or edit the task", t.Cwd)
		v.waitingDir = known.Path
		if never {
			v.fail = true
			return v, nil
		}
		v.hold = true
	case !known.Known && !never:
		v.hold = true
		v.waitingDir = known.Path
		v.reason = fmt.Sprintf("%s is not a known place (not inside a workspace root, a department's directory or a place you authorized): authorize it with `airlock authorize %s`", known.Path, known.Path)
	}
	return v, nil
}
