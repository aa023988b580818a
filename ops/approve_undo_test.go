package ops

import (
	"context"
	"strings"
	"testing"
)

// When the journal refuses the approval, nothing was approved: no token is left live
// that nobody holds, the plan is back to diffed, and a second approval works once the
// journal accepts again.
func TestApprovalTheJournalRefusesLeavesNoToken(t *testing.T) {
	e := newEnv(t)
	v := e.create(t, e.plan())
	e.diff(t, v.ID)
	if err := e.db.Exec(`CREATE TRIGGER refuse_approved BEFORE INSERT ON ops_journal_entries WHEN NEW.event = 'approved'
		BEGIN SELECT RAISE(ABORT, 'disk full'); END`).Error; err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Approve(context.Background(), v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], By: "alice", Interactive: true})
	if err == nil || !strings.Contains(err.Error(), "nothing was approved") {
		t.Fatalf("approve with the journal refusing = %v; want an error saying nothing was approved", err)
	}
	var live int64
	e.db.Model(&ApprovalToken{}).Where("plan_id = ?", v.ID).Count(&live)
	if live != 0 {
		t.Fatalf("%d token(s) left after a refused approval", live)
	}
	if st := e.status(t, v.ID); st != StatusDiffed {
		t.Fatalf("plan status = %s; want diffed", st)
	}
	if err := e.db.Exec(`DROP TRIGGER refuse_approved`).Error; err != nil {
		t.Fatal(err)
	}
	if tok := e.approve(t, v); tok == "" {
		t.Fatal("no token after the journal accepted again")
	}
}
