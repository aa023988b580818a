package eventbus

// Topics of the events the core publishes. frontend/src/lib/events.ts mirrors this list;
// a test keeps the two equal.
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
	TopicInboxChanged        = "inbox.changed"
	TopicOpsPlanUpdated      = "ops.plan.updated"
	TopicOpsJournalAppended  = "ops.journal.appended"
	TopicSandboxStatus       = "sandbox.status"
	TopicSandboxInstall      = "sandbox.install"
	TopicDispatchState       = "dispatch.state"
	TopicWindowShow          = "window.show"
)

// Topics lists every topic above.
var Topics = []string{
	TopicConfigChanged, TopicPermissionRequested, TopicPermissionDecided, TopicGrantsChanged, TopicRunUpdated,
	TopicRunLog, TopicTaskUpdated, TopicTaskRemoved, TopicDepartmentUpdated, TopicInboxChanged,
	TopicOpsPlanUpdated, TopicOpsJournalAppended, TopicSandboxStatus, TopicSandboxInstall, TopicDispatchState,
	TopicWindowShow,
}
