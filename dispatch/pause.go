package dispatch

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"

	"github.com/airlock-app/airlock/api"
)

// pausedKey is the dispatch_state row present while dispatch is paused.
const pausedKey = "paused"

// State is whether dispatch starts scheduled runs on its own (the wire's type): the
// sidebar footer and the tray show it; it is published on dispatch.state whenever it
// changes.
type State = api.DispatchState

// skipReason is why an occurrence is skipped while dispatch is paused as s says.
func skipReason(s State) string {
	who := ""
	if s.PausedBy != "" {
		who = " by " + s.PausedBy
	}
	when := ""
	if s.PausedAt != nil {
		when = " since " + s.PausedAt.Local().Format("2006-01-02 15:04")
	}
	return "dispatch paused" + who + when + " (resume it from the tray, the window, or `airlock dispatch resume`)"
}

// State reports whether dispatch is paused and how many tasks and runs it has. It reads
// the database (the pause survives a restart).
func (d *Dispatcher) State() State {
	return d.state(d.ctx)
}

func (d *Dispatcher) state(ctx context.Context) State {
	var st State
	var row stateRow
	db := d.db.WithContext(ctx)
	if err := db.Where("key = ?", pausedKey).Limit(1).Find(&row).Error; err == nil && row.Key == pausedKey {
		at := row.Value
		st.Paused, st.PausedAt, st.PausedBy = true, &at, row.Text
	}
	var n int64
	if db.Model(&Task{}).Where("enabled = ? AND schedule <> ''", true).Count(&n).Error == nil {
		st.Tasks = int(n)
	}
	if db.Model(&Run{}).Where("status = ?", StatusRunning).Count(&n).Error == nil {
		st.Running = int(n)
	}
	return st
}

// SetPaused pauses or resumes dispatch (by names who: "tray", "window", "cli"). Pausing
// twice keeps the first time and author. While paused, scheduled occurrences are recorded
// skipped with the reason; resuming does not run them afterwards.
func (d *Dispatcher) SetPaused(ctx context.Context, paused bool, by string) (State, error) {
	db := d.db.WithContext(ctx)
	if paused {
		row := stateRow{Key: pausedKey, Value: d.now().UTC(), Text: by}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return State{}, fmt.Errorf("pause dispatch: %w", err)
		}
	} else if err := db.Where("key = ?", pausedKey).Delete(&stateRow{}).Error; err != nil {
		return State{}, fmt.Errorf("resume dispatch: %w", err)
	}
	st := d.state(ctx)
	d.stateChanged(st)
	return st, nil
}

// publishState publishes the current State (after a change of tasks or running runs).
func (d *Dispatcher) publishState() {
	if d.opts.Publisher != nil {
		d.stateChanged(d.state(d.ctx))
	}
}
