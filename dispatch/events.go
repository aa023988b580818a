package dispatch

import "github.com/airlock-app/airlock/api"

// The events dispatch publishes, each with its payload type from api.Events.

func (d *Dispatcher) publish(topic string, payload any) {
	if d.opts.Publisher != nil {
		d.opts.Publisher.Publish(topic, payload)
	}
}

func (d *Dispatcher) inboxChanged() {
	d.heldDirsChanged()
	d.publish(api.TopicInboxChanged, api.InboxChanged{})
}

func (d *Dispatcher) runUpdated(r Run) {
	d.publish(api.TopicRunUpdated, api.RunUpdated{ID: r.ID, TaskID: r.TaskID, TaskName: r.TaskName, Status: r.Status})
}

func (d *Dispatcher) taskUpdated(t Task) {
	d.publish(api.TopicTaskUpdated, api.TaskUpdated{ID: t.ID, Name: t.Name})
}

func (d *Dispatcher) notice(n api.DispatchNotice) { d.publish(api.TopicDispatchNotify, n) }

func (d *Dispatcher) stateChanged(st State) {
	d.publish(api.TopicDispatchState, api.DispatchStateChanged{Paused: st.Paused, Tasks: st.Tasks, Running: st.Running})
}

func (d *Dispatcher) digested(dg Digest) {
	d.publish(api.TopicDispatchDigest, api.DispatchDigest{Since: dg.Since, Text: dg.Text,
		HeldRuns: len(dg.Held), MissedRuns: len(dg.Missed), FailedRuns: len(dg.Failed), PausedTasks: dg.PausedTasks})
}
