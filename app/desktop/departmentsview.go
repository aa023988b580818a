package desktop

import (
	"context"
	"errors"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
)

// The Departments page's façade, and the directory picker both pages use. Each method
// calls the core's operation that the local API's route calls too (app/dispatch.go), as
// the window.

// DepartmentRow is one department as the Departments page lists it, with its tasks.
type DepartmentRow = api.DepartmentRow

func (f *Facade) departmentsCore() error {
	if f.core == nil || f.core.Departments == nil {
		return errNoCore
	}
	return nil
}

// Departments lists the departments by name with their defaults, whether their
// directory is there, and their tasks. The window re-reads it on department.updated
// and task.updated.
func (f *Facade) Departments() ([]DepartmentRow, error) {
	if err := f.departmentsCore(); err != nil {
		return nil, err
	}
	return f.core.ListDepartments(app.WindowCaller())
}

// AddDepartment names dir (which must exist; ~ is expanded) as a department with
// defaults. Runs inside it start without asking from then on.
func (f *Facade) AddDepartment(name, dir string, defaults api.Defaults) (api.Department, error) {
	if err := f.departmentsCore(); err != nil {
		return api.Department{}, err
	}
	return f.core.AddDepartment(app.WindowCaller(), api.DepartmentIn{Name: name, Dir: dir, Defaults: defaults})
}

// SetDepartmentDefaults replaces a department's defaults; runs started from then on use
// them (a running run keeps the policy it started with).
func (f *Facade) SetDepartmentDefaults(name string, defaults api.Defaults) (api.Department, error) {
	if err := f.departmentsCore(); err != nil {
		return api.Department{}, err
	}
	return f.core.SetDepartmentDefaults(app.WindowCaller(), name, api.DefaultsIn{Defaults: defaults})
}

// RemoveDepartment removes a department (its directory is left alone). Its tasks stay;
// their runs wait under Waiting for you until it is re-created or they are edited.
func (f *Facade) RemoveDepartment(name string) error {
	if err := f.departmentsCore(); err != nil {
		return err
	}
	_, err := f.core.RemoveDepartment(app.WindowCaller(), name)
	return err
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
