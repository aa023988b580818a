package api

import (
	"encoding/json"
	"reflect"
	"time"
)

// Event is one published fact as it travels: on the core's bus, in the server-sent
// events of EventStream (each `data:` line is one Event) and, split into payload and
// meta, to the window. Seq grows by one for every event of a bus, so a gap tells a
// subscriber it missed some.
type Event struct {
	Seq     uint64          `json:"seq"`
	Topic   string          `json:"topic"`
	Time    time.Time       `json:"time"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// EventQuery is what EventStream takes: the topics to receive (all when empty).
type EventQuery struct {
	Topics []string `json:"topics,omitempty"`
}

// EventStream is the live event stream, served as server-sent events (`id: SEQ`,
// `event: TOPIC`, `data: <Event>`). It answers no JSON body, so it is served raw and
// read with the client's Events, not with Call.
var EventStream = route[EventQuery, None]("GET", "/v1/events")

// Topics of the events the core publishes, each declared once here with its payload
// type (Events). Payloads are small on purpose: they say what changed, and a
// subscriber re-reads what it shows through the local API or the façade.
const (
	TopicConfigChanged       = "config.changed"
	TopicPermissionRequested = "permission.requested"
	TopicPermissionDecided   = "permission.decided"
	TopicGrantsChanged       = "grants.changed"
	TopicRunUpdated          = "run.updated"
	TopicRunLog              = "run.log"
	TopicTaskUpdated         = "task.updated"
	TopicTaskRemoved         = "task.removed"
	TopicDepartmentUpdated   = "department.updated"
	TopicPlacesChanged       = "places.changed"
	TopicInboxChanged        = "inbox.changed"
	TopicOpsPlanUpdated      = "ops.plan.updated"
	TopicOpsJournalAppended  = "ops.journal.appended"
	TopicSandboxStatus       = "sandbox.status"
	TopicSandboxInstall      = "sandbox.install"
	TopicDispatchState       = "dispatch.state"
	TopicDispatchDigest      = "dispatch.digest"
	TopicDispatchNotify      = "dispatch.notify"
	TopicWindowShow          = "window.show"
)

// EventInfo pairs a topic with the one type its payload has.
type EventInfo struct {
	Topic   string
	Payload reflect.Type
}

func event[P any](topic string) EventInfo {
	return EventInfo{Topic: topic, Payload: reflect.TypeFor[P]()}
}

// Events is the event table: every topic the core publishes, in declaration order, with
// the type of its payload. The bus refuses anything else, and the frontend's types
// (frontend/src/lib/wire.gen.ts) are generated from it.
var Events = []EventInfo{
	event[ConfigChanged](TopicConfigChanged),
	event[PermissionRequested](TopicPermissionRequested),
	event[PermissionDecided](TopicPermissionDecided),
	event[Revoked](TopicGrantsChanged), // the grant revoked
	event[RunUpdated](TopicRunUpdated),
	event[RunLogChunk](TopicRunLog),
	event[TaskUpdated](TopicTaskUpdated),
	event[TaskRemoved](TopicTaskRemoved),
	event[DepartmentUpdated](TopicDepartmentUpdated),
	event[PlacesChanged](TopicPlacesChanged),
	event[InboxChanged](TopicInboxChanged),
	event[OpsPlanUpdated](TopicOpsPlanUpdated),
	event[OpsJournalAppended](TopicOpsJournalAppended),
	event[SandboxStatusChanged](TopicSandboxStatus),
	event[VMStatus](TopicSandboxInstall), // the installer's status, with its progress
	event[DispatchStateChanged](TopicDispatchState),
	event[DispatchDigest](TopicDispatchDigest),
	event[DispatchNotice](TopicDispatchNotify),
	event[WindowShow](TopicWindowShow),
}

// Topics lists every topic of Events, in order.
func Topics() []string {
	out := make([]string, len(Events))
	for i, e := range Events {
		out[i] = e.Topic
	}
	return out
}

// PayloadType is the payload type of topic; ok is false for a topic the core does not
// publish.
func PayloadType(topic string) (t reflect.Type, ok bool) {
	for _, e := range Events {
		if e.Topic == topic {
			return e.Payload, true
		}
	}
	return nil, false
}

// ConfigChanged (config.changed): config.toml was read again (valid or not). The
// configuration's view is re-read with the config route.
type ConfigChanged struct {
	Path     string    `json:"path"`
	Exists   bool      `json:"exists"`
	LoadedAt time.Time `json:"loaded_at"`
	// Valid is false when the file (or the environment) has mistakes; the previous
	// good settings stay in force.
	Valid bool `json:"valid"`
}

// PermissionRequested (permission.requested): a request waits for a person.
type PermissionRequested struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Summary string `json:"summary"` // redacted
	Tier    string `json:"tier"`
	// InteractiveOnly: only a person at the window or a proven terminal may answer.
	InteractiveOnly bool `json:"interactive_only"`
}

// PermissionDecided (permission.decided): a request got its final decision.
type PermissionDecided struct {
	ID      string `json:"id"`
	Summary string `json:"summary"` // redacted
	Verdict string `json:"verdict"`
	Tier    string `json:"tier"`
	Layer   string `json:"layer"`
}

// RunUpdated (run.updated): a dispatch run was created or changed state. Its fields
// are those of the run's own JSON, so a subscriber matches a run by id.
type RunUpdated struct {
	ID       uint   `json:"id"`
	TaskID   uint   `json:"task_id"`
	TaskName string `json:"task_name"`
	Status   string `json:"status"`
}

// RunLogChunk (run.log): a chunk of a running run's output, secrets already redacted.
type RunLogChunk struct {
	RunID  uint   `json:"run_id"`
	TaskID uint   `json:"task_id"`
	Chunk  string `json:"chunk"`
}

// TaskUpdated (task.updated): a task was created or changed.
type TaskUpdated struct {
	ID   uint   `json:"id"`
	Name string `json:"name"`
}

// TaskRemoved (task.removed): a task was deleted.
type TaskRemoved struct {
	ID   uint   `json:"id"`
	Name string `json:"name"`
}

// DepartmentUpdated (department.updated): a department was added, changed, removed
// (status "removed"), went missing or came back.
type DepartmentUpdated struct {
	ID     uint   `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// PlacesChanged (places.changed): the places runs may start in changed; one field is
// set.
type PlacesChanged struct {
	Authorized     string   `json:"authorized,omitempty"`      // the directory just authorized
	Revoked        string   `json:"revoked,omitempty"`         // the directory just revoked
	WorkspaceRoots []string `json:"workspace_roots,omitempty"` // the workspace roots, when config.toml set them
}

// InboxChanged (inbox.changed): what waits for a person (held runs, requests) changed.
type InboxChanged struct{}

// OpsPlanUpdated (ops.plan.updated): an operation plan was created or changed status.
type OpsPlanUpdated struct {
	PlanID  string `json:"plan_id"`
	Project string `json:"project"`
	Status  string `json:"status"`
	Hash    string `json:"hash"`
}

// OpsJournalAppended (ops.journal.appended): an entry was added to a project's journal.
type OpsJournalAppended struct {
	Project string `json:"project"`
	Seq     int64  `json:"seq"`
	PlanID  string `json:"plan_id,omitempty"`
	Event   string `json:"event"`
}

// SandboxStatusChanged (sandbox.status): the start-up probes finished, or the
// configuration changed what they mean (the indicator); the full status is re-read with
// the sandbox status route.
type SandboxStatusChanged struct {
	// Requested is the configured isolation backend (auto, os, app).
	Requested string `json:"requested"`
	// Backend is what commands will run under: bwrap, landlock, seatbelt or app.
	Backend   string           `json:"backend"`
	Warning   string           `json:"warning,omitempty"`
	Error     string           `json:"error,omitempty"`
	Indicator SandboxIndicator `json:"indicator"`
}

// DispatchStateChanged (dispatch.state): dispatch was paused or resumed, or its counts
// changed.
type DispatchStateChanged struct {
	Paused  bool `json:"paused"`
	Tasks   int  `json:"tasks"`   // enabled tasks with a schedule
	Running int  `json:"running"` // runs running now
}

// DispatchDigest (dispatch.digest): what happened while nobody watched (at start-up,
// and after a long gap).
type DispatchDigest struct {
	Since       time.Time `json:"since"`
	Text        string    `json:"text"`        // a one-paragraph summary for a notification
	HeldRuns    int       `json:"held_runs"`   // runs waiting for a person now
	MissedRuns  int       `json:"missed_runs"` // occurrences that did not run since Since
	FailedRuns  int       `json:"failed_runs"` // runs that failed, timed out, expired or were interrupted since Since
	PausedTasks []string  `json:"paused_tasks,omitempty"`
}

// Kinds of a DispatchNotice.
const (
	NoticeNeedsYou   = "needs_you"
	NoticeFailure    = "failure"
	NoticeTaskPaused = "task_paused"
)

// DispatchNotice (dispatch.notify): something a person should hear about.
type DispatchNotice struct {
	Kind    string `json:"kind"` // needs_you | failure | task_paused
	RunID   uint   `json:"run_id,omitempty"`
	Task    string `json:"task,omitempty"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
}

// WindowShow (window.show): a second launch asked the window to come to the front.
type WindowShow struct{}
