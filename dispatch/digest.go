package dispatch

import (
	"context"
	"fmt"
	"time"
)

// RunBrief is one line of a digest or the inbox.
type RunBrief struct {
	ID          uint      `json:"id"`
	Task        string    `json:"task"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	ScheduledAt time.Time `json:"scheduled_at"`
	// MissedCount is how many occurrences a span of missed ones stands for (0: one).
	MissedCount int `json:"missed_count,omitempty"`
}

// Digest summarizes what happened while nobody was watching.
type Digest struct {
	Since time.Time `json:"since"`
	// Held are the runs waiting for a person now.
	Held []RunBrief `json:"held"`
	// Missed are occurrences recorded skipped since Since (missed, overlap, paused).
	Missed []RunBrief `json:"missed"`
	// Failed are runs that ended failed, timed out, interrupted, expired or denied since Since.
	Failed []RunBrief `json:"failed"`
	// PausedTasks are tasks that paused themselves.
	PausedTasks []string `json:"paused_tasks,omitempty"`
	// Text is a one-paragraph summary for a notification.
	Text string `json:"text"`
}

// Empty reports whether there is nothing to tell.
func (g Digest) Empty() bool {
	return len(g.Held) == 0 && len(g.Missed) == 0 && len(g.Failed) == 0 && len(g.PausedTasks) == 0
}

const digestLimit = 200

// Digest returns what was held, missed or failed since the given time.
func (d *Dispatcher) Digest(ctx context.Context, since time.Time) (Digest, error) {
	g := Digest{Since: since}
	brief := func(rs []Run) []RunBrief {
		out := make([]RunBrief, 0, len(rs))
		for _, r := range rs {
			out = append(out, RunBrief{ID: r.ID, Task: r.TaskName, Status: r.Status, Reason: r.Reason, ScheduledAt: r.ScheduledAt, MissedCount: r.MissedCount})
		}
		return out
	}
	var held, missed, failed []Run
	db := d.db.WithContext(ctx)
	if err := db.Where(heldRuns).Order("id").Limit(digestLimit).Find(&held).Error; err != nil {
		return g, fmt.Errorf("digest: %w", err)
	}
	if err := db.Where("status = ? AND created_at >= ?", StatusSkipped, since).Order("id").Limit(digestLimit).Find(&missed).Error; err != nil {
		return g, fmt.Errorf("digest: %w", err)
	}
	if err := db.Where("status IN ? AND finished_at >= ?", []string{StatusFailed, StatusTimedOut, StatusInterrupted, StatusExpired, StatusDenied}, since).
		Order("id").Limit(digestLimit).Find(&failed).Error; err != nil {
		return g, fmt.Errorf("digest: %w", err)
	}
	g.Held, g.Missed, g.Failed = brief(held), brief(missed), brief(failed)
	var paused []Task
	if err := db.Where(pausedTasks).Find(&paused).Error; err == nil {
		for _, t := range paused {
			g.PausedTasks = append(g.PausedTasks, t.Name)
		}
	}
	occurrences := 0
	for _, r := range missed {
		occurrences += max(r.MissedCount, 1) // a span row stands for MissedCount
	}
	g.Text = fmt.Sprintf("%d runs waiting for you, %d occurrences did not run, %d runs failed or were interrupted", len(g.Held), occurrences, len(g.Failed))
	if len(g.PausedTasks) > 0 {
		g.Text += fmt.Sprintf(", %d tasks paused themselves", len(g.PausedTasks))
	}
	return g, nil
}
