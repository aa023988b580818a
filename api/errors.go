package api

import "net/http"

// Error is the local API's error body: what went wrong, a stable code a client can match
// (never the message), and the way out.
type Error struct {
	// Status is the HTTP status; it is not in the body.
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Message
	}
	return e.Message + ": " + e.Hint
}

// Is makes errors.Is(err, &api.Error{Code: c}) match any API error with code c, so a
// client matches codes, never message text.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code && (t.Status == 0 || t.Status == e.Status)
}

// Errorf returns an API error with a status, a code and a message.
func Errorf(status int, code, message, hint string) *Error {
	return &Error{Status: status, Code: code, Message: message, Hint: hint}
}

// Error codes: what a client may match. Each names a kind of refusal, not one message.
const (
	CodeInternal       = "internal"         // 500: a failure of Airlock itself (database, disk)
	CodeBadRequest     = "bad_request"      // 400: the body or a parameter is malformed
	CodeInvalid        = "invalid"          // 400: well formed, but the domain refuses the values
	CodeNotFound       = "not_found"        // 404: no such task, run, department, plan, grant, …
	CodeConflict       = "conflict"         // 409: it exists already, or its state does not allow this
	CodeOverlap        = "overlap"          // 409: a run of the task is active and the task does not overlap
	CodeWrongStatus    = "wrong_status"     // 409: the plan's status does not allow this step
	CodeDrift          = "drift"            // 409: what a plan was approved against changed
	CodeConfirmHome    = "confirm_home"     // 428: a second confirmation is needed (`/`, the home directory)
	CodeNotPending     = "not_pending"      // 404: the request was answered or expired
	CodeBadAnswer      = "bad_answer"       // 400: the answer does not fit the request
	CodeInteractive    = "interactive_only" // 403: only a person at the window or a terminal may answer
	CodeNeedsPerson    = "needs_person"     // 403: an answer needs a person, and none was proven
	CodeNotInteractive = "not_interactive"  // 403: an act only a person may do came without proof
	CodeNotProven      = "not_proven"       // 403: the offered proof of a person failed
	CodeNotConfirmed   = "not_confirmed"    // 403: the typed confirmation does not match
	CodeProofLocked    = "proof_locked"     // 429: too many failed proofs; wait
	CodeNoPAM          = "no_pam"           // 403: the core has no PAM to check a password
	CodeBadToken       = "bad_token"        // 401/403: a bearer or approval token is missing, wrong, used or expired
	CodeBadHost        = "bad_host"         // 403: a TCP request named a non-loopback host
	CodeForeignOrigin  = "foreign_origin"   // 403: a browser origin other than the window's
	CodeForeignUser    = "foreign_user"     // 403: another uid on the unix socket
	CodeSandboxed      = "sandboxed_caller" // 403: a sandboxed process may not change state
	CodeNotYourSandbox = "not_your_sandbox" // 400: a pid registered as a sandbox is not the caller's child
	CodeGaveUp         = "gave_up"          // 408: the caller went away or the wait timed out
	CodeProbing        = "probing"          // 503: the sandbox probes have not finished
	CodeNoStream       = "no_stream"        // 500: the server cannot stream
	CodeUnavailable    = "unavailable"      // 503: the part of the core this needs is not running
	CodeUnsupported    = "unsupported"      // 501: this machine cannot do it (no micro-VM on this architecture)
	CodeTooMany        = "too_many"         // 429: this caller has as many requests or connections open as it may
)

// StatusOf is the HTTP status of a code (500 for an unknown one).
func StatusOf(code string) int {
	switch code {
	case CodeBadRequest, CodeInvalid, CodeBadAnswer, CodeNotYourSandbox:
		return http.StatusBadRequest
	case CodeNotFound, CodeNotPending:
		return http.StatusNotFound
	case CodeConflict, CodeOverlap, CodeWrongStatus, CodeDrift:
		return http.StatusConflict
	case CodeConfirmHome:
		return http.StatusPreconditionRequired
	case CodeInteractive, CodeNeedsPerson, CodeNotInteractive, CodeNotProven, CodeNotConfirmed,
		CodeNoPAM, CodeBadHost, CodeForeignOrigin, CodeForeignUser, CodeSandboxed:
		return http.StatusForbidden
	case CodeBadToken:
		return http.StatusForbidden
	case CodeProofLocked, CodeTooMany:
		return http.StatusTooManyRequests
	case CodeGaveUp:
		return http.StatusRequestTimeout
	case CodeProbing, CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeUnsupported:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}
