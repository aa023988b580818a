package ops

import (
	"errors"
	"fmt"
)

// ValidationError names the plan (or input) field that is wrong and why.
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string { return e.Field + " " + e.Problem }

func fieldErr(field, problem string) error { return &ValidationError{Field: field, Problem: problem} }

// Token errors returned by [Service.Apply]. In every case nothing ran.
var (
	// ErrTokenUnknown: no token with this value was ever minted (or it was mistyped).
	ErrTokenUnknown = errors.New("approval token unknown: nothing ran; approve the plan again (airlock ops approve PLAN) and use the token it prints")
	// ErrTokenUsed: the token was already redeemed; tokens are single-use, even when the apply failed.
	ErrTokenUsed = errors.New("approval token already used: nothing ran; tokens are single-use and a failed apply does not give them back, approve the plan again")
	// ErrTokenExpired: the token's TTL elapsed before it was used.
	ErrTokenExpired = errors.New("approval token expired: nothing ran; approve the plan again")
	// ErrTokenOtherPlan: the token was minted for a different plan.
	ErrTokenOtherPlan = errors.New("approval token belongs to another plan: nothing ran; use the token printed when this plan was approved")
)

// Flow errors.
var (
	// ErrNotInteractive: approval was asked for without a person at a TTY or in the window.
	ErrNotInteractive = errors.New("ops approval is interactive-only: a person must confirm it at a terminal or in the Airlock window; no rule, grant, reviewer or script can approve a plan")
	// ErrNoDiff: the plan has no diff attached yet.
	ErrNoDiff = errors.New("no diff, no approval: attach a diff first (airlock ops diff PLAN --run | --file F)")
	// ErrLiveToken: a token minted for the plan is still valid and unused.
	ErrLiveToken = errors.New("the plan already has a live approval token: apply with it, reject the plan, or wait until it expires")
	// ErrPlanNotFound: no plan with that id.
	ErrPlanNotFound = errors.New("no such plan")
)

// HashConfirmationError says the typed hash prefix does not confirm the plan's hash.
type HashConfirmationError struct {
	Got  string
	Want string // the plan's full hash
}

func (e *HashConfirmationError) Error() string {
	if len(e.Got) < MinConfirmPrefix {
		return fmt.Sprintf("confirm the plan hash: type at least its first %d characters (it starts %s)", MinConfirmPrefix, e.Want[:MinConfirmPrefix])
	}
	return fmt.Sprintf("the typed hash %q does not match this plan's hash (%s…): check you are approving the plan you reviewed", e.Got, e.Want[:MinConfirmPrefix])
}

// StatusError says the plan is not in a status that allows the operation.
type StatusError struct {
	PlanID string
	Op     string
	Status Status
	Hint   string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s plan %s: plan is %s", e.Op, e.PlanID, e.Status)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// DriftError (the brief's ErrPlanDrift) says the plan changed since it was approved, or the
// caller presented a command, snapshot command or working directory other than the
// approved one. Nothing ran.
type DriftError struct {
	// Field is "apply_command", "snapshot_command", "workdir" or "plan" (any other field).
	Field  string
	Detail string
}

func (e *DriftError) Error() string {
	return fmt.Sprintf("plan drift in %s: %s; nothing ran, open a new plan (or re-approve this one) for the change you want", e.Field, e.Detail)
}

// ErrPlanDrift is the type name the brief uses; it is [DriftError].
type ErrPlanDrift = DriftError

// Drift fields.
const (
	FieldApplyCommand    = "apply_command"
	FieldSnapshotCommand = "snapshot_command"
	FieldWorkdir         = "workdir"
	FieldPlan            = "plan"
)
