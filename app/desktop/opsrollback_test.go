package desktop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/ops"
)

// The window's journal view of a journal put back to an older state: the saved head row
// and anchor file restored after later entries were deleted. The view's verification
// names the rollback, as `airlock ops journal --verify` does.
func TestOpsWindowShowsARolledBackJournal(t *testing.T) {
	if !inChild(t) {
		return
	}
	core, f, p, dir := opsWindow(t, "cp new.conf app.conf", true)
	anchorPath := ops.AnchorPath(filepath.Join(core.Paths.DataDir, "ops"))
	savedAnchor, err := os.ReadFile(anchorPath)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Seq       int64
		Hash, Mac string
	}
	if err := core.DB.Raw("SELECT seq, hash, mac FROM ops_journal_heads WHERE project = ?", p.Project).Scan(&head).Error; err != nil || head.Seq == 0 {
		t.Fatalf("saved head %+v %v", head, err)
	}
	if _, err := core.Ops.Reject(context.Background(), p.ID, "not tonight", "window"); err != nil {
		t.Fatal(err)
	}
	newOpsPlan(t, core, dir, "cp new.conf app.conf")
	for _, q := range []string{"DROP TRIGGER IF EXISTS ops_journal_no_delete", "DELETE FROM ops_journal_entries WHERE project = ? AND seq > ?",
		"UPDATE ops_journal_heads SET seq = ?, hash = ?, mac = ? WHERE project = ?"} {
		var args []any
		switch {
		case strings.HasPrefix(q, "DELETE"):
			args = []any{p.Project, head.Seq}
		case strings.HasPrefix(q, "UPDATE"):
			args = []any{head.Seq, head.Hash, head.Mac, p.Project}
		}
		if err := core.DB.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(anchorPath, savedAnchor, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := f.OpsJournal(p.Project)
	if err != nil || j.Verification == nil || j.Verification.OK {
		t.Fatalf("journal view: %+v %v", j, err)
	}
	var kinds []string
	for _, pr := range j.Verification.Problems {
		kinds = append(kinds, pr.Kind)
		if pr.Kind == ops.ProblemRolledBack && !strings.Contains(pr.Detail, "was rolled back") {
			t.Errorf("rolled back without its evidence: %+v", pr)
		}
	}
	if !strings.Contains(strings.Join(kinds, ","), ops.ProblemRolledBack) {
		t.Fatalf("the window's journal does not name the rollback: %+v", j.Verification.Problems)
	}
}
