package api

import (
	"net/http"
	"time"
)

// Defaults are the settings a department gives the tasks that run in it, or a task's
// overrides of them. An empty string (or a nil Network) means "not set here": the next
// layer down decides. The json names are the configuration's keys.
type Defaults struct {
	// Profile names a profile (built in or config.toml's [profiles.NAME]) whose settings
	// apply beneath the other fields here.
	Profile string `json:"profile,omitempty"`
	// Posture is "" (standard) or "cloudops" (bash becomes P2, network on).
	Posture string `json:"posture,omitempty"`
	// SandboxMode is read-only | workspace-write | full-access.
	SandboxMode string `json:"sandbox_mode,omitempty"`
	// Network is the runs' network_access: off, allowlist or on (the old true/false
	// decode as on/off).
	Network *NetworkAccess `json:"network,omitempty"`
	// ApprovalPolicy is untrusted | on-request | on-failure | never.
	ApprovalPolicy string `json:"approval_policy,omitempty"`
	// ExecutionMode is local | sandbox | auto.
	ExecutionMode string `json:"execution_mode,omitempty"`
	// Limits lower or raise [limits] for the runs (a zero field: not set here).
	Limits Limits `gorm:"embedded;embeddedPrefix:limits_" json:"limits,omitzero"`
}

// Department is a named directory with defaults for the tasks that run in it (also the
// departments table's row).
type Department struct {
	ID   uint   `gorm:"primaryKey" json:"id"`
	Name string `gorm:"uniqueIndex;not null" json:"name"`
	// Directory is the resolved (symlink-free, absolute) directory.
	Directory string   `gorm:"not null" json:"directory"`
	Defaults  Defaults `gorm:"embedded;embeddedPrefix:default_" json:"defaults"`
	// Status is ok, or missing when the directory vanished (removed or renamed).
	Status       string    `gorm:"not null;default:ok" json:"status"`
	StatusReason string    `json:"status_reason,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// DepartmentRow is a department with the tasks that belong to it (their runs wait while
// it is missing or gone): what the department list answers.
type DepartmentRow struct {
	Department
	Tasks []string `json:"tasks"`
}

// AuthorizedPlace is a directory the person authorized by name (also the
// authorized_places table's row). Runs may start in it and below it. Revoking keeps the
// row (who/when) with RevokedAt set.
type AuthorizedPlace struct {
	ID           uint       `gorm:"primaryKey" json:"id"`
	Path         string     `gorm:"uniqueIndex;not null" json:"path"`
	By           string     `json:"by"`
	AuthorizedAt time.Time  `json:"authorized_at"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RevokedBy    string     `json:"revoked_by,omitempty"`
}

// Active reports whether the place is currently authorized.
func (p AuthorizedPlace) Active() bool { return p.RevokedAt == nil }

// KnownPlace is one entry of the list of places where runs may start.
type KnownPlace struct {
	Path string `json:"path"`
	// By is workspace, department or authorized.
	By         string `json:"by"`
	Department string `json:"department,omitempty"`
	Status     string `json:"status,omitempty"`
	// Reason says why a place with a status other than ok makes nothing known.
	Reason string     `json:"reason,omitempty"`
	Who    string     `json:"who,omitempty"`
	When   *time.Time `json:"when,omitempty"`
}

// DepartmentIn names a directory as a department. A department whose defaults widen
// access, or whose directory is not a known place yet, is a person's act: over the API
// it carries the proof.
type DepartmentIn struct {
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`
	Defaults Defaults `json:"defaults"`
	Proof
}

// DefaultsIn replaces a department's defaults (the body is the defaults themselves,
// beside the proof a widening needs).
type DefaultsIn struct {
	Defaults
	Proof
}

// Removed answers the removal of a task or a department: its name.
type Removed struct {
	Removed string `json:"removed"`
}

// The departments' routes.
var (
	ListDepartments       = route[None, []DepartmentRow](http.MethodGet, "/v1/departments")
	AddDepartment         = route[DepartmentIn, Department](http.MethodPost, "/v1/departments")
	GetDepartment         = route[None, Department](http.MethodGet, "/v1/departments/{name}")
	SetDepartmentDefaults = route[DefaultsIn, Department](http.MethodPut, "/v1/departments/{name}/defaults")
	RemoveDepartment      = route[None, Removed](http.MethodDelete, "/v1/departments/{name}")
)
