package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// apiError is the one error mapper of the local API: a domain's error becomes an
// *api.Error by the sentinel (errors.Is) or the type (errors.As) it wraps, never by its
// message text ("bwrap not found" is no 404). The domains' messages already name the
// problem and the way out; the hint adds the airlock command that helps. An error that
// matches nothing is Airlock's own failure: 500.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	mk := func(code, hint string) error {
		return api.Errorf(api.StatusOf(code), code, err.Error(), hint)
	}
	var (
		conf *departments.ConfirmationRequiredError
		ve   *ops.ValidationError
		se   *ops.StatusError
		de   *ops.DriftError
		he   *ops.HashConfirmationError
	)
	switch {
	// Dispatch and departments.
	case errors.As(err, &conf):
		return mk(api.CodeConfirmHome, "")
	case errors.Is(err, dispatch.ErrOverlap), errors.Is(err, dispatch.ErrBacklogFull):
		return mk(api.CodeOverlap, "")
	case errors.Is(err, dispatch.ErrNotFound), errors.Is(err, departments.ErrNotFound):
		return mk(api.CodeNotFound, "")
	case errors.Is(err, dispatch.ErrInvalid), errors.Is(err, departments.ErrInvalid):
		return mk(api.CodeInvalid, "")
	// Ops.
	case errors.Is(err, ops.ErrPlanNotFound):
		return mk(api.CodeNotFound, "list plans with `airlock ops list`")
	case errors.Is(err, ops.ErrTokenUnknown), errors.Is(err, ops.ErrTokenUsed), errors.Is(err, ops.ErrTokenExpired), errors.Is(err, ops.ErrTokenOtherPlan):
		return api.Errorf(http.StatusForbidden, api.CodeBadToken, err.Error(), "")
	case errors.As(err, &de):
		return mk(api.CodeDrift, "")
	case errors.Is(err, ops.ErrNotInteractive), errors.As(err, &he):
		return mk(api.CodeNotConfirmed, "")
	case errors.As(err, &ve), errors.Is(err, ops.ErrNoDiff):
		return mk(api.CodeInvalid, "")
	case errors.As(err, &se), errors.Is(err, ops.ErrLiveToken):
		return mk(api.CodeWrongStatus, "")
	// The permission broker.
	case errors.Is(err, permission.ErrGrantNotFound):
		return mk(api.CodeNotFound, "list grants with `airlock grants list`")
	case errors.Is(err, permission.ErrTooManyPending):
		return mk(api.CodeTooMany, "wait for the person to answer what is already waiting (`airlock approvals list`), then ask again")
	case errors.Is(err, permission.ErrNotPending):
		return mk(api.CodeNotPending, "it was answered or expired; list what waits with `airlock approvals list`")
	case errors.Is(err, permission.ErrInteractiveOnly):
		return mk(api.CodeInteractive, "this request needs a person: answer it in the Airlock window, or with `airlock approvals allow ID` at a terminal and type your login password")
	case errors.Is(err, permission.ErrNeedsPerson):
		return mk(api.CodeNeedsPerson, "answer it in the Airlock window, or with `airlock approvals allow ID` at a terminal and type your login password")
	case errors.Is(err, permission.ErrBadAnswer), errors.Is(err, permission.ErrRequestMismatch):
		return mk(api.CodeBadAnswer, "")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return mk(api.CodeGaveUp, "")
	}
	return mk(api.CodeInternal, "")
}
