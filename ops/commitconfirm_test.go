package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeDevice copies the commit-confirm example (ops/testdata/vyos-commit-confirm) into
// the env's working directory and starts its router: a process of its own, outside
// anything Airlock runs, that rolls an unconfirmed commit back when its timer runs out.
func fakeDevice(t *testing.T, e *env) {
	t.Helper()
	for _, tool := range []string{"bash", "flock", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: apt install bash util-linux diffutils", tool)
		}
	}
	if err := os.CopyFS(e.dir, os.DirFS(filepath.Join("testdata", "vyos-commit-confirm"))); err != nil {
		t.Fatal(err)
	}
	dev := exec.Command("./fakevyos", "device")
	dev.Dir = e.dir
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Process.Kill(); _ = dev.Wait() })
}

// commitConfirmPlan reads the example's plan.json with its rollback window set to
// window seconds (in the apply's commit-confirm N and in confirm_within_seconds alike).
func commitConfirmPlan(t *testing.T, e *env, window int, change string) PlanInput {
	t.Helper()
	var in PlanInput
	b, err := os.ReadFile(filepath.Join(e.dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	in.Workdir = filepath.Join(e.dir, in.Workdir)
	in.Apply.Argv[2], in.ConfirmWithinSeconds = strconv.Itoa(window), window
	if change != "" {
		// The same plan committing another change (here: one that locks management out).
		b, err := os.ReadFile(filepath.Join(e.dir, change))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, "firewall.conf"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// applyCommitConfirm runs plan → diff → approve → apply and checks the commit is live
// and awaiting its confirm.
func applyCommitConfirm(t *testing.T, e *env, in PlanInput) *PlanView {
	t.Helper()
	ctx := context.Background()
	pv, err := e.svc.OpsPlan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.OpsDiff(ctx, DiffInput{PlanID: pv.ID, Run: true}); err != nil {
		t.Fatal(err)
	}
	ap, err := e.svc.ApprovalPrompt(ctx, pv.ID)
	if err != nil || ap.ConfirmCommand != "./fakevyos confirm" || ap.ConfirmWithinSeconds != in.ConfirmWithinSeconds {
		t.Fatalf("the approval prompt does not show the confirm: %+v %v", ap, err)
	}
	ar, err := e.svc.OpsApprove(ctx, ApproveInput{PlanID: pv.ID, ConfirmHashPrefix: pv.Hash[:12]}, Attestation{By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.svc.OpsApply(ctx, ApplyInput{PlanID: pv.ID, Token: ar.Token}); err != nil || res.Status != StatusApplied {
		t.Fatalf("apply: %+v %v", res, err)
	}
	// The device took the commit on probation (with a short window it may already have
	// rolled it back: its log says which).
	if log := readFile(t, filepath.Join(e.dir, "device.log")); !strings.HasPrefix(log, fmt.Sprintf("committed, rollback in %ds unless confirmed\n", in.ConfirmWithinSeconds)) {
		t.Fatalf("the device did not take the commit-confirm: %q", log)
	}
	return pv
}

// journalEvents checks the plan's journal verifies and returns its events.
func journalEvents(t *testing.T, e *env, planID string) string {
	t.Helper()
	jo, err := e.svc.OpsJournal(context.Background(), JournalInput{PlanID: planID, Verify: true})
	if err != nil || !jo.Verification.OK {
		t.Fatalf("journal: %+v %v", jo, err)
	}
	var events []string
	for _, x := range jo.Entries {
		events = append(events, x.Event)
	}
	return strings.Join(events, ",")
}

// waitRolledBack waits for the fake router's own timer to roll the commit back.
func waitRolledBack(t *testing.T, e *env) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(readFile(t, filepath.Join(e.dir, "device.log")), "rolled back") {
			return
		}
	}
	t.Fatalf("the device did not roll back: %s", readFile(t, filepath.Join(e.dir, "device.log")))
}

// TestCommitConfirmExampleVerifiedIsConfirmed: every assertion passes, so the first
// verify sends the confirm; the router keeps the commit, and a re-verify sends nothing.
func TestCommitConfirmExampleVerifiedIsConfirmed(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	ctx := context.Background()
	before := readFile(t, filepath.Join(e.dir, "running.conf"))
	// A window no slow machine outlasts: this outcome must not depend on timing.
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 600, ""))

	vr, err := e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerified || vr.Confirm == nil || vr.Confirm.Outcome != ConfirmSent || vr.Confirm.ExitCode != 0 {
		t.Fatalf("verify: %+v %+v %v", vr, vr.Confirm, err)
	}
	if !strings.Contains(vr.Confirm.Output, "commit confirmed") {
		t.Fatalf("confirm output: %q", vr.Confirm.Output)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pending")); !os.IsNotExist(err) {
		t.Fatal("the device still awaits a confirm")
	}
	after := readFile(t, filepath.Join(e.dir, "running.conf"))
	if after == before || !strings.Contains(after, "rule 20 destination port 443") {
		t.Fatalf("the confirmed change is not live: %q", after)
	}
	if log := readFile(t, filepath.Join(e.dir, "device.log")); log != "committed, rollback in 600s unless confirmed\nconfirmed\n" {
		t.Fatalf("device log: %q", log)
	}

	// A re-verify checks again and never confirms a second time.
	vr, err = e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerified || vr.Confirm != nil {
		t.Fatalf("re-verify: %+v %v", vr, err)
	}
	if got := journalEvents(t, e, pv.ID); got != "planned,diff_attached,approved,apply_started,apply_finished,verified,confirmed,verified" {
		t.Fatalf("journal events: %s", got)
	}
}

// TestCommitConfirmExampleFailedRollsBack: the change locks management out, an
// assertion fails, Airlock withholds the confirm and the router rolls back by itself.
func TestCommitConfirmExampleFailedRollsBack(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	ctx := context.Background()
	before := readFile(t, filepath.Join(e.dir, "running.conf"))
	// A window verify starts within on a loaded machine: a router already rolled back
	// would pass the assertions and the confirm be withheld for another reason.
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 4, "firewall-lockout.conf"))

	vr, err := e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerifyFailed || vr.Confirm == nil || vr.Confirm.Outcome != ConfirmWithheld || vr.Confirm.ExitCode != -1 {
		t.Fatalf("verify: %+v %+v %v", vr, vr.Confirm, err)
	}
	if !strings.Contains(vr.Confirm.Reason, "an assertion failed") || vr.Assertions[1].Passed {
		t.Fatalf("verify: %+v %+v", vr.Assertions, vr.Confirm)
	}
	waitRolledBack(t, e)
	if got := readFile(t, filepath.Join(e.dir, "running.conf")); got != before {
		t.Fatalf("the router did not return to the config before the apply: %q", got)
	}
	if log := readFile(t, filepath.Join(e.dir, "device.log")); log != "committed, rollback in 4s unless confirmed\nrolled back: no confirm in time\n" {
		t.Fatalf("a confirm reached the device: %q", log)
	}
	if got := journalEvents(t, e, pv.ID); got != "planned,diff_attached,approved,apply_started,apply_finished,verify_failed,confirm_withheld" {
		t.Fatalf("journal events: %s", got)
	}
	// Verifying again, now that the router rolled back, sends nothing either.
	if vr, err := e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID}); err != nil || vr.Confirm != nil {
		t.Fatalf("re-verify: %+v %v", vr, err)
	}
}

// TestCommitConfirmWindowPassedIsWithheld: the assertions pass, but only after the
// rollback window ended (by Airlock's clock): a late confirm could confirm another
// pending commit, so none is sent.
func TestCommitConfirmWindowPassedIsWithheld(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 600, ""))
	e.clock.Advance(600 * time.Second)

	vr, err := e.svc.OpsVerify(context.Background(), VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerifyFailed || vr.Confirm == nil || vr.Confirm.Outcome != ConfirmWithheld {
		t.Fatalf("verify: %+v %+v %v", vr, vr.Confirm, err)
	}
	for _, a := range vr.Assertions {
		if !a.Passed {
			t.Fatalf("assertion failed: %+v", a)
		}
	}
	if !strings.Contains(vr.Confirm.Reason, "rollback window") {
		t.Fatalf("reason: %q", vr.Confirm.Reason)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pending")); err != nil {
		t.Fatal("a confirm reached the device")
	}
	if got := journalEvents(t, e, pv.ID); got != "planned,diff_attached,approved,apply_started,apply_finished,verified,confirm_withheld" {
		t.Fatalf("journal events: %s", got)
	}
}

// TestCommitConfirmConfirmFailsOnTheDevice: the device refuses the confirm (here: the
// commit was already rolled back); the plan is verify_failed and the failure journaled.
func TestCommitConfirmConfirmFailsOnTheDevice(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 600, ""))
	if err := os.Remove(filepath.Join(e.dir, "pending")); err != nil {
		t.Fatal(err)
	}
	vr, err := e.svc.OpsVerify(context.Background(), VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerifyFailed || vr.Confirm == nil || vr.Confirm.Outcome != ConfirmFailed || vr.Confirm.ExitCode != 1 {
		t.Fatalf("verify: %+v %+v %v", vr, vr.Confirm, err)
	}
	if !strings.Contains(vr.Confirm.Output, "no commit is awaiting its confirm") {
		t.Fatalf("confirm output: %q", vr.Confirm.Output)
	}
	if got := journalEvents(t, e, pv.ID); got != "planned,diff_attached,approved,apply_started,apply_finished,verified,confirm_failed" {
		t.Fatalf("journal events: %s", got)
	}
}

// TestCommitConfirmPlanValidation: a confirm needs its window and the other way round,
// and a plan without one keeps the hash it had before confirm steps existed.
func TestCommitConfirmPlanValidation(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name  string
		edit  func(*PlanInput)
		field string
	}{
		{"confirm without window", func(p *PlanInput) { p.Confirm = Command{Argv: []string{"confirm"}} }, "confirm_within_seconds"},
		{"window without confirm", func(p *PlanInput) { p.ConfirmWithinSeconds = 60 }, "confirm"},
		{"negative window", func(p *PlanInput) { p.Confirm, p.ConfirmWithinSeconds = Command{Argv: []string{"confirm"}}, -1 }, "confirm_within_seconds"},
		{"both forms", func(p *PlanInput) {
			p.Confirm, p.ConfirmWithinSeconds = Command{Argv: []string{"confirm"}, Shell: "confirm"}, 60
		}, "confirm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := e.plan()
			tc.edit(&in)
			_, err := e.svc.CreatePlan(context.Background(), in)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("want an error naming %s, got %v", tc.field, err)
			}
		})
	}
	p := e.plan().OperationPlan
	p.Workdir, p.Project = "/w", "dir:/w"
	plain := PlanHash(&p)
	if strings.Contains(string(CanonicalBytes(&p)), "confirm") {
		t.Fatal("a plan without a confirm serializes confirm fields")
	}
	p.Confirm, p.ConfirmWithinSeconds = Command{Argv: []string{"confirm"}}, 60
	withConfirm := PlanHash(&p)
	p.ConfirmWithinSeconds = 61
	if plain == withConfirm || withConfirm == PlanHash(&p) {
		t.Fatal("the confirm step is not covered by the plan hash")
	}
}

// TestCommitConfirmConcurrentVerifiesConfirmOnce: of verifies racing after the apply,
// exactly one sends the confirm; the others only check, and nothing is journaled as a
// failed confirm.
func TestCommitConfirmConcurrentVerifiesConfirmOnce(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 600, ""))
	const n = 4
	results := make(chan *VerifyResult, n)
	for range n {
		go func() {
			vr, err := e.svc.OpsVerify(context.Background(), VerifyInput{PlanID: pv.ID})
			if err != nil {
				t.Error(err)
			}
			results <- vr
		}()
	}
	confirms := 0
	for range n {
		vr := <-results
		if vr == nil {
			continue
		}
		if vr.Confirm != nil {
			confirms++
			if vr.Confirm.Outcome != ConfirmSent {
				t.Errorf("confirm: %+v", vr.Confirm)
			}
		}
	}
	if confirms != 1 {
		t.Fatalf("%d verifies confirmed, want exactly 1", confirms)
	}
	if log := readFile(t, filepath.Join(e.dir, "device.log")); log != "committed, rollback in 600s unless confirmed\nconfirmed\n" {
		t.Fatalf("device log: %q", log)
	}
	if got := journalEvents(t, e, pv.ID); strings.Count(got, "confirmed") != 1 || strings.Contains(got, "confirm_failed") {
		t.Fatalf("journal events: %s", got)
	}
	if v, _ := e.svc.Plan(context.Background(), pv.ID); v.Status != StatusVerified {
		t.Fatalf("plan status %s", v.Status)
	}
}
