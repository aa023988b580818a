package desktop

import (
	"context"
	"errors"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/airlock-app/airlock/departments"
)

// The Departments page's façade, and the directory picker both pages use. Each method
// makes the same core call as the local API's route (app/dispatch.go).

// DepartmentRow is one department as the Departments page lists it.
type DepartmentRow struct {
	departments.Department
	// Tasks names the tasks that belong to it (their runs wait while it is missing or gone).
	Tasks []string `json:"tasks"`
}

// Departments lists the departments by name with their defaults, whether their
// directory is there, and their tasks. The window re-reads it on department.updated
// and task.updated.
func (f *Facade) Departments() ([]DepartmentRow, error) {
	if f.core == nil || f.core.Departments == nil {
		return nil, errNoCore
	}
	ctx, cancel := windowCtx()
	defer cancel()
	list, err := f.core.Departments.List(ctx)
	if err != nil {
		return nil, err
	}
	byDept := map[string][]string{}
	if f.core.Dispatch != nil {
		tasks, err := f.core.Dispatch.Tasks(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.Department != "" {
				byDept[t.Department] = append(byDept[t.Department], t.Name)
			}
		}
	}
	out := make([]DepartmentRow, 0, len(list))
	for _, d := range list {
		tasks := byDept[d.Name]
		if tasks == nil {
			tasks = []string{}
		}
		out = append(out, DepartmentRow{Department: d, Tasks: tasks})
	}
	return out, nil
}

// AddDepartment names dir (which must exist; ~ is expanded) as a department with
// defaults. Runs inside it start without asking from then on.
func (f *Facade) AddDepartment(name, dir string, defaults departments.Defaults) (departments.Department, error) {
	if f.core == nil || f.core.Departments == nil {
		return departments.Department{}, errNoCore
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return f.core.Departments.Add(ctx, name, dir, defaults)
}

// SetDepartmentDefaults replaces a department's defaults; runs started from then on use
// them (a running run keeps the policy it started with).
func (f *Facade) SetDepartmentDefaults(name string, defaults departments.Defaults) (departments.Department, error) {
	if f.core == nil || f.core.Departments == nil {
		return departments.Department{}, errNoCore
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return f.core.Departments.SetDefaults(ctx, name, defaults)
}

// RemoveDepartment removes a department (its directory is left alone). Its tasks stay;
// their runs wait under Waiting for you until it is re-created or they are edited.
func (f *Facade) RemoveDepartment(name string) error {
	if f.core == nil || f.core.Departments == nil {
		return errNoCore
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return f.core.Departments.Remove(ctx, name)
}

// errNoDialog says the directory picker cannot open (no window: a browser test, or the
// window is not up yet); the path can be typed instead.
var errNoDialog = errors.New("the directory picker needs the Airlock window; type the path instead")

// windowContexts holds the Wails context of each façade, given by the shell at start-up
// (Wails refuses contexts it did not create, so dialogs need exactly that one).
var windowContexts sync.Map // *Facade → context.Context

// setContext gives the façade the window's Wails context, for dialogs.
func (f *Facade) setContext(ctx context.Context) { windowContexts.Store(f, ctx) }

// ChooseDirectory opens the system's directory picker at start (or the home directory)
// and returns the chosen directory, or "" when the person cancels.
func (f *Facade) ChooseDirectory(title, start string) (string, error) {
	v, ok := windowContexts.Load(f)
	if !ok {
		return "", errNoDialog
	}
	if start == "" {
		start = f.Home()
	}
	return runtime.OpenDirectoryDialog(v.(context.Context), runtime.OpenDialogOptions{
		Title: title, DefaultDirectory: start, CanCreateDirectories: true, ShowHiddenFiles: false,
	})
}
