package desktop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// Add, edit defaults, see a removed directory as missing, remove: what the Departments
// page does, against the real service.
func TestDepartmentsPage(t *testing.T) {
	core, f := startedCore(t)
	parent := vartmp.Dir(t, "airlock-depts-")
	dir := filepath.Join(parent, "platform")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if rows, err := f.Departments(); err != nil || len(rows) != 0 {
		t.Fatalf("no departments = %+v, %v", rows, err)
	}
	on := api.NetworkOn
	d, err := f.AddDepartment("platform", dir, api.Defaults{SandboxMode: "read-only", Network: &on})
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	if d.Directory != dir || d.Defaults.SandboxMode != "read-only" || d.Defaults.Network == nil || *d.Defaults.Network != api.NetworkOn {
		t.Errorf("added = %+v", d)
	}
	for _, c := range []struct {
		name, dir, want string
	}{
		{"platform", dir, "already exists"},
		{"bad name", dir, "department name"},
		{"gone", filepath.Join(parent, "nope"), "does not exist"},
		{"rel", "relative/dir", "not an absolute path"},
	} {
		if _, err := f.AddDepartment(c.name, c.dir, api.Defaults{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("add %s %s = %v; want %q", c.name, c.dir, err, c.want)
		}
	}
	if _, err := f.SetDepartmentDefaults("platform", api.Defaults{ApprovalPolicy: "sometimes"}); err == nil || !strings.Contains(err.Error(), "unknown approval policy") {
		t.Errorf("bad defaults = %v", err)
	}
	d, err = f.SetDepartmentDefaults("platform", api.Defaults{SandboxMode: "workspace-write", ApprovalPolicy: "on-failure"})
	if err != nil || d.Defaults.ApprovalPolicy != "on-failure" || d.Defaults.Network != nil {
		t.Fatalf("set defaults = %+v, %v", d, err)
	}

	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := core.Departments.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := f.Departments()
	if err != nil || len(rows) != 1 || rows[0].Status != departments.StatusMissing || rows[0].StatusReason == "" {
		t.Fatalf("after removing the directory = %+v, %v; want missing with a reason", rows, err)
	}
	if err := f.RemoveDepartment("platform"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if err := f.RemoveDepartment("platform"); err == nil {
		t.Error("removing it twice succeeded")
	}
	if rows, _ := f.Departments(); len(rows) != 0 {
		t.Errorf("after remove = %+v", rows)
	}
}

// Without the window (tests, the browser e2e) the picker says to type the path.
func TestChooseDirectoryWithoutWindow(t *testing.T) {
	f := NewFacade(nil)
	if _, err := f.ChooseDirectory("Pick", ""); !errors.Is(err, errNoDialog) {
		t.Errorf("choose = %v; want errNoDialog", err)
	}
	if _, err := f.Departments(); !errors.Is(err, errNoCore) {
		t.Errorf("departments without a core = %v", err)
	}
	if _, err := f.Tasks(); !errors.Is(err, errNoCore) {
		t.Errorf("tasks without a core = %v", err)
	}
}
