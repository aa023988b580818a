package desktop

import (
	"errors"
	"fmt"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/departments"
)

// errNoCore says the core part a window action needs is not running.
var errNoCore = errors.New("the Airlock core is not running this part; restart Airlock")

// Answer answers a pending request from the window. A click in the window is a person:
// interactive-only requests may be allowed here (and only here or on a terminal). scope
// is once (or empty), session or always; session and always exist for P1 only (the
// broker refuses them otherwise). reason is optional and kept in the audit.
func (f *Facade) Answer(id string, allow bool, scope string, reason string) error {
	if f.core.Broker == nil {
		return errNoCore
	}
	_, err := f.core.AnswerApproval(app.WindowCaller(), id, api.AnswerIn{Allow: allow, Scope: api.Scope(scope), Reason: reason})
	return err
}

// Inbox is "Waiting for you": held runs grouped by directory, paused runs and tasks,
// and pending approvals, most urgent first. The window re-reads it on inbox.changed,
// run.updated and permission.requested/decided.
func (f *Facade) Inbox() ([]api.InboxItem, error) {
	if f.core.Dispatch == nil {
		return []api.InboxItem{}, nil
	}
	return f.core.Inbox(app.WindowCaller())
}

// Authorization is what authorizing a directory from the window did, or the second
// confirmation it needs first.
type Authorization = api.Authorization

// AuthorizeDirectory records dir as a place the person authorized in the window and
// releases every run held on it or below it. For `/` and the home directory it first
// answers NeedsConfirmation, with what would become writable, unless confirmHome.
func (f *Facade) AuthorizeDirectory(dir string, confirmHome bool) (Authorization, error) {
	if f.core.Dispatch == nil {
		return Authorization{}, errNoCore
	}
	res, err := f.core.AuthorizeDir(app.WindowCaller(), api.AuthorizeIn{Dir: dir, ConfirmHome: confirmHome})
	var confirm *departments.ConfirmationRequiredError
	if errors.As(err, &confirm) {
		return Authorization{Path: confirm.Dir, Released: []uint{}, NeedsConfirmation: true, Confirmation: confirmationWords(confirm)}, nil
	}
	if err != nil {
		return Authorization{}, err
	}
	return res, nil
}

// confirmationWords is the second confirmation's sentence, for a person in the window
// (the error's own text ends with the CLI flag).
func confirmationWords(e *departments.ConfirmationRequiredError) string {
	msg := e.Error()
	if before, _, ok := strings.Cut(msg, "; if that is really"); ok {
		msg = before
	}
	return fmt.Sprintf("%s. Runs held there, and every future run there, start without asking.", strings.TrimSuffix(msg, "."))
}

// CancelRuns cancels held runs from the window ("Skip" under Waiting for you): each is
// recorded cancelled by the window, and nothing of it runs. It stops at the first run it
// cannot cancel (one that already ended, for instance) and says which.
func (f *Facade) CancelRuns(ids []uint) error {
	if f.core.Dispatch == nil {
		return errNoCore
	}
	for _, id := range ids {
		if _, err := f.core.CancelRun(app.WindowCaller(), id); err != nil {
			return err
		}
	}
	return nil
}
