package agentcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/realpath"
)

// sessionDepartment completes a session's department and posture from the core: the
// posture of the department named with --department, or, when none is named, of the
// department whose directory holds the workspace (the innermost one). A posture given
// with --posture is kept; a department's can only add cloudops to a session that named
// none. An unknown department is an error that says where the departments are listed.
func sessionDepartment(ctx context.Context, c *localapi.Client, department, posture, cwd string) (string, string, error) {
	var dep api.Department
	if department != "" {
		d, err := localapi.Call(ctx, c, api.GetDepartment, api.None{}, department)
		if errors.Is(err, &api.Error{Code: api.CodeNotFound}) {
			return "", "", fmt.Errorf("there is no department %q: `airlock dept list` shows them, `airlock dept add NAME DIR` adds one", department)
		}
		if err != nil {
			return "", "", fmt.Errorf("department %s: %w", department, err)
		}
		dep = d
	} else {
		rows, err := localapi.Call(ctx, c, api.ListDepartments, api.None{})
		if err != nil {
			return "", "", fmt.Errorf("the departments: %w", err)
		}
		dir := cwd
		if real, ok, err := realpath.Resolve(cwd, realpath.Options{}); err == nil && ok {
			dir = real // departments' directories are resolved
		}
		for _, r := range rows {
			if r.Status == "ok" && realpath.Within(dir, r.Directory) && len(r.Directory) > len(dep.Directory) {
				dep = r.Department
			}
		}
	}
	if posture == "" {
		posture = dep.Defaults.Posture
	}
	return dep.Name, posture, nil
}
