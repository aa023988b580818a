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
	if t.Department != "" {
		dep, err := d.depts.Get(ctx, t.Department)
		switch {
		case errors.Is(err, departments.ErrNotFound):
			deptProblem, deptName = fmt.Sprintf("department %s no longer exists: re-create it (`airlock dept add %s DIR`) or edit the task's department", t.Department, t.Department), t.Department
		case err != nil:
			return v, fmt.Errorf("gate: %w", err)
		default:
			v.policy = v.policy.Apply(dep.Defaults)
			if dep.Status != departments.StatusOK {
				deptProblem, deptName = fmt.Sprintf("department %s is missing its directory: %s", dep.Name, dep.StatusReason), dep.Name
			}
		}
	}
	v.policy = v.policy.Apply(t.Overrides)
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
