package dispatch

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// Inbox item kinds, most urgent first.
const (
	InboxApprovalKind  = "approval"    // a pending approval (a process or run waits on it)
	InboxPausedRun     = "paused_run"  // a run stopped after repeated denials
	InboxDirectoryKind = "directory"   // runs held until a directory is authorized
	InboxDepartment    = "department"  // runs held for a missing or deleted department
	InboxPausedTask    = "paused_task" // a task that paused itself after failures
)

// InboxItem is one entry of "Waiting for you": what is asked and how to answer (the
// wire's type).
type InboxItem = api.InboxItem

func kindRank(k string) int {
	switch k {
	case InboxApprovalKind:
		return 0
	case InboxPausedRun:
		return 1
	case InboxDirectoryKind:
		return 2
	case InboxDepartment:
		return 3
	}
	return 4
}

// BuildInbox merges held runs, self-paused tasks and pending approvals into one list, most
// urgent first: approvals (P2 before P1) — a process waits on them —, then paused runs,
// then held directories and departments (earliest deadline first), then paused tasks.
// Runs held on the same directory are one item: one answer releases them all.
func BuildInbox(held []Run, paused []Task, approvals []InboxApproval) []InboxItem {
	var items []InboxItem
	byApproval := map[string]*Run{}
	for i := range held {
		if held[i].ApprovalID != "" {
			byApproval[held[i].ApprovalID] = &held[i]
		}
	}
	covered := map[uint]bool{}
	for _, a := range approvals {
		it := InboxItem{
			Kind: InboxApprovalKind, Key: a.ID, Tier: a.Tier, Since: a.RequestedAt, Deadline: a.Deadline,
			Asked:   fmt.Sprintf("%s wants to run %s: %s", orDefault(a.Tool, "a tool"), a.Tier, a.Summary),
			Actions: []string{"allow", "deny"},
			Answer:  fmt.Sprintf("airlock approvals allow %s | airlock approvals deny %s", a.ID, a.ID),
		}
		if a.InteractiveOnly {
			it.Answer = "answer in the window's popup or with `airlock approvals` on a terminal (interactive only)"
		}
		r := byApproval[a.ID]
		if r == nil && a.RunID != 0 {
			for i := range held {
				if held[i].ID == a.RunID {
					r = &held[i]
				}
			}
		}
		if r != nil {
			covered[r.ID] = true
			it.Runs, it.Tasks = []uint{r.ID}, []string{r.TaskName}
			if it.Deadline == nil {
				it.Deadline = r.HoldUntil
			}
			it.Asked = fmt.Sprintf("run #%d of task %s waits for your approval: %s", r.ID, r.TaskName, a.Summary)
			if hostQuestion(*r) {
				it.Asked = fmt.Sprintf("run #%d of task %s: %s", r.ID, r.TaskName, r.Reason)
			}
		}
		items = append(items, it)
	}
	dirs := map[string]*InboxItem{}
	for _, r := range held {
		if covered[r.ID] {
			continue
		}
		since := r.CreatedAt
		if r.HeldSince != nil {
			since = *r.HeldSince
		}
		switch {
		case r.Paused:
			items = append(items, InboxItem{
				Kind: InboxPausedRun, Key: fmt.Sprintf("run:%d", r.ID), Since: r.UpdatedAt, Runs: []uint{r.ID}, Tasks: []string{r.TaskName},
				Asked:   fmt.Sprintf("run #%d of task %s is %s", r.ID, r.TaskName, r.Reason),
				Actions: []string{"resume", "cancel"},
				Answer:  fmt.Sprintf("airlock runs resume %d | airlock runs cancel %d", r.ID, r.ID),
			})
		case r.Status == StatusWaitingApproval:
			asked := fmt.Sprintf("run #%d of task %s waits for your approval of its command", r.ID, r.TaskName)
			if hostQuestion(r) {
				asked = fmt.Sprintf("run #%d of task %s: %s", r.ID, r.TaskName, r.Reason)
			}
			items = append(items, InboxItem{
				Kind: InboxApprovalKind, Key: orDefault(r.ApprovalID, fmt.Sprintf("run:%d", r.ID)), Since: since, Deadline: r.HoldUntil,
				Runs: []uint{r.ID}, Tasks: []string{r.TaskName},
				Asked:   asked,
				Actions: []string{"allow", "deny", "cancel"},
				Answer:  fmt.Sprintf("airlock approvals (request %s) | airlock runs cancel %d", r.ApprovalID, r.ID),
			})
		case r.Status == StatusWaitingDirectory:
			kind, key := InboxDirectoryKind, "dir:"+r.WaitingDir
			if r.WaitingDept != "" {
				kind, key = InboxDepartment, "dept:"+r.WaitingDept
			}
			it := dirs[key]
			if it == nil {
				it = &InboxItem{Kind: kind, Key: key, Dir: r.WaitingDir, Since: since, Deadline: r.HoldUntil}
				if kind == InboxDirectoryKind {
					it.Actions = []string{"authorize", "cancel"}
					it.Answer = "airlock authorize " + api.ShellQuote(r.WaitingDir)
				} else {
					it.Actions = []string{"cancel"}
					it.Answer = fmt.Sprintf("airlock dept add %s DIR (or edit the task) | airlock runs cancel ID", r.WaitingDept)
				}
				dirs[key] = it
			}
			it.Runs = append(it.Runs, r.ID)
			if !contains(it.Tasks, r.TaskName) {
				it.Tasks = append(it.Tasks, r.TaskName)
			}
			if since.Before(it.Since) {
				it.Since = since
			}
			if r.HoldUntil != nil && (it.Deadline == nil || r.HoldUntil.Before(*it.Deadline)) {
				it.Deadline = r.HoldUntil
			}
			it.Asked = fmt.Sprintf("%d held run(s) of %s: %s", len(it.Runs), strings.Join(it.Tasks, ", "), r.Reason)
		}
	}
	for _, it := range dirs {
		items = append(items, *it)
	}
	for _, t := range paused {
		items = append(items, InboxItem{
			Kind: InboxPausedTask, Key: "task:" + t.Name, Since: t.UpdatedAt, Tasks: []string{t.Name},
			Asked:   fmt.Sprintf("task %s paused itself: %s", t.Name, t.PauseReason),
			Actions: []string{"enable"},
			Answer:  "airlock task enable " + t.Name,
		})
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if ra, rb := kindRank(a.Kind), kindRank(b.Kind); ra != rb {
			return ra < rb
		}
		if a.Kind == InboxApprovalKind && a.Tier != b.Tier {
			return a.Tier > b.Tier // P2 before P1
		}
		if (a.Deadline == nil) != (b.Deadline == nil) {
			return a.Deadline != nil
		}
		if a.Deadline != nil && !a.Deadline.Equal(*b.Deadline) {
			return a.Deadline.Before(*b.Deadline)
		}
		return a.Since.Before(b.Since)
	})
	return items
}

// heldRuns selects the runs waiting for a person: held for a directory or an approval,
// paused after repeated denials, or running but waiting on an answer (waiting_for). It is idx_runs_held's condition (api.Run) written
// the same way, literals included, so that SQLite reads that small index instead of
// every run ever recorded; TestQueriesUseTheirIndex checks that it does.
const heldRuns = "status = '" + StatusWaitingDirectory + "' OR status = '" + StatusWaitingApproval + "' OR paused OR waiting_for <> ''"

// pausedTasks selects the tasks that paused themselves (idx_tasks_paused's condition).
const pausedTasks = "paused"

// Inbox returns "Waiting for you": held runs, paused runs and tasks, and the broker's
// pending approvals (when Options.Pending is set), most urgent first.
func (d *Dispatcher) Inbox(ctx context.Context) ([]InboxItem, error) {
	var held []Run
	if err := d.db.WithContext(ctx).Where(heldRuns).Order("id").Find(&held).Error; err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	var paused []Task
	if err := d.db.WithContext(ctx).Where(pausedTasks).Find(&paused).Error; err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	var approvals []InboxApproval
	if d.opts.Pending != nil {
		approvals = d.opts.Pending.Pending()
	}
	return BuildInbox(held, paused, approvals), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// hostQuestion reports whether r waits for auto's question (its command should run in
// the micro-VM, which is not ready: may it run on the host?); its reason asks it.
func hostQuestion(r Run) bool {
	return r.Status == StatusWaitingApproval && strings.HasSuffix(r.ApprovalID, "-host") && r.Reason != ""
}
