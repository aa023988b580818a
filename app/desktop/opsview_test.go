package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/ops"
)

// childEnv marks the test process that runs one ops test on its own (see inChild).
const childEnv = "AIRLOCK_OPSVIEW_TEST_CHILD"

// inChild runs the calling test in a child test process and reports false there is
// nothing more to do here; in the child it reports true. The ops journal's key lives in
// the keyring, reached through godbus's process-wide session-bus connection: once a test
// opens it, the tray and notification tests (which point DBUS_SESSION_BUS_ADDRESS at a
// private bus) would talk to the wrong bus. A child process keeps that connection out of
// this one.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("%s in a child process failed: %v\n%s", t.Name(), err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Skipf("skipped in the child process:\n%s", out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("%s did not run in the child process:\n%s", t.Name(), out)
	}
	return false
}

// needKeyring skips (or, under AIRLOCK_REQUIRE_KEYRING=1, fails) when no Secret Service
// answers: the ops journal is authenticated with a key kept in the keyring, and Airlock
// never falls back to a file. Run with scripts/with-test-keyring.sh.
func needKeyring(t *testing.T, core *app.Core) {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		// Without an address godbus would autolaunch a session bus (dbus-launch), which
		// outlives the test together with the keyring it activates.
		if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
			t.Fatal("the keyring is required here but DBUS_SESSION_BUS_ADDRESS is not set")
		}
		t.Skip("no session bus (run under scripts/with-test-keyring.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := core.Secrets.Check(ctx); err != nil {
		if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
			t.Fatalf("the keyring is required here but: %v", err)
		}
		t.Skipf("no Secret Service answers (run under scripts/with-test-keyring.sh): %v", err)
	}
}

// opsWorkdir is a directory outside /tmp (the sandbox treats /tmp specially) with a
// config file the plan changes from port=80 to port=8080.
func opsWorkdir(t *testing.T) string {
	t.Helper()
	dir := vartmp.Dir(t, "airlock-opsview-")
	for name, text := range map[string]string{"app.conf": "name=shop\nport=80\n", "new.conf": "name=shop\nport=8080\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const opsPlanJSON = `{
  "target": {"provider": "file", "device": "app.conf"},
  "intent": "move the shop to port 8080",
  "workdir": ".",
  "apply": {"shell": "%s"},
  "inputs": ["new.conf"],
  "snapshot": {"argv": ["cat", "app.conf"]},
  "diff": {"argv": ["diff", "-u", "app.conf", "new.conf"]},
  "timeout_seconds": 30,
  "steps": [
    {"description": "replace app.conf with new.conf", "effect": "change the port", "reversibility": "reversible", "blast_radius": "med", "rollback": "restore app.conf"},
    {"description": "clients reconnect", "effect": "drop open connections", "reversibility": "irreversible", "blast_radius": "low"}
  ],
  "verify": [
    {"name": "port is 8080", "command": "grep port= app.conf", "expect_text": "port=8080"},
    {"name": "name kept", "command": "grep name= app.conf", "expect_text": "name=shop"}
  ]
}`

// opsWindow opens a core with a keyring, the window's facade on it and a plan whose
// apply runs applyShell in a fresh opsWorkdir; with diffed the plan's diff is run too.
func opsWindow(t *testing.T, applyShell string, diffed bool) (*app.Core, *Facade, *ops.PlanView, string) {
	t.Helper()
	core, _ := openCore(t)
	needKeyring(t, core)
	f := NewFacade(core)
	dir := opsWorkdir(t)
	p := newOpsPlan(t, core, dir, applyShell)
	if diffed {
		if _, err := f.OpsRunDiff(p.ID); err != nil {
			t.Fatal(err)
		}
	}
	return core, f, p, dir
}

// newOpsPlan opens a plan as `airlock ops plan --file plan.json` does.
func newOpsPlan(t *testing.T, core *app.Core, dir, applyShell string) *ops.PlanView {
	t.Helper()
	in, err := ops.DecodePlanInput([]byte(fmt.Sprintf(opsPlanJSON, applyShell)), dir)
	if err != nil {
		t.Fatalf("decode the plan: %v", err)
	}
	p, err := core.Ops.OpsPlan(context.Background(), in)
	if err != nil {
		t.Fatalf("open the plan: %v", err)
	}
	return p
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The whole path from the window: no diff no approval, the diff on demand, approval by
// the full hash with the token returned once, a second approval revealing nothing, apply
// with the token, its replay refused, verify with evidence, the journal intact and then
// an edited row named.
func TestOpsFromTheWindow(t *testing.T) {
	if !inChild(t) {
		return
	}
	core, f, p, dir := opsWindow(t, "cp new.conf app.conf", false)

	d, err := f.OpsPlanDetail(p.ID)
	if err != nil || d.Plan.Status != ops.StatusDraft || d.Plan.Diff != nil || len(d.Evidence) != 0 || d.Verification != nil {
		t.Fatalf("a new plan's detail = %+v, %v; want a draft with no diff and no evidence", d, err)
	}
	if _, err := f.OpsApprove(p.ID, p.Hash, ""); !errors.Is(err, ops.ErrNoDiff) {
		t.Fatalf("approve before the diff = %v; want no diff, no approval", err)
	}

	diff, err := f.OpsRunDiff(p.ID)
	if err != nil {
		t.Fatalf("run the diff: %v", err)
	}
	if diff.Status != ops.StatusDiffed || !strings.Contains(diff.Diff.Content, "+port=8080") || !strings.Contains(diff.Diff.Content, "-port=80") {
		t.Fatalf("diff = %+v; want the unified diff of app.conf → new.conf", diff)
	}
	if readFile(t, filepath.Join(dir, "app.conf")) != "name=shop\nport=80\n" {
		t.Fatal("the diff changed app.conf")
	}

	prompt, err := f.OpsApprovalPrompt(p.ID)
	if err != nil || prompt.Hash != p.Hash || prompt.ApplyCommand != "cp new.conf app.conf" || prompt.WorstReversibility != ops.Irreversible || prompt.WorstBlastRadius != ops.BlastMed {
		t.Fatalf("prompt = %+v, %v; want the hash, the command, worst irreversible/med", prompt, err)
	}

	// Only the full hash the window showed approves.
	if _, err := f.OpsApprove(p.ID, p.Hash[:8], ""); err == nil {
		t.Fatal("an 8-character prefix approved from the window; want the full hash")
	}
	other := strings.Repeat("0", 64)
	var hce *ops.HashConfirmationError
	if _, err := f.OpsApprove(p.ID, other, ""); !errors.As(err, &hce) {
		t.Fatalf("approve with another hash = %v; want a hash confirmation error", err)
	}
	if _, err := f.OpsApprove(p.ID, p.Hash, "2h"); err == nil {
		t.Fatal("a 2h TTL was accepted; the most is 60 minutes")
	}

	res, err := f.OpsApprove(p.ID, strings.ToUpper(p.Hash), "")
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	token := res.Token
	if len(token) != 43 || res.PlanHash != p.Hash || time.Until(res.ExpiresAt) > 10*time.Minute || time.Until(res.ExpiresAt) < 9*time.Minute {
		t.Fatalf("approval = %+v; want a 43-character token bound to the hash, valid 10 minutes", res)
	}

	// The token is never shown again: not by a second approval, not in the detail, not in the journal.
	again, err := f.OpsApprove(p.ID, p.Hash, "")
	if !errors.Is(err, ops.ErrLiveToken) || again != nil {
		t.Fatalf("second approval = %+v, %v; want refused (live token) and nothing returned", again, err)
	}
	d, err = f.OpsPlanDetail(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Plan.Status != ops.StatusApproved || d.Plan.Token == nil || !d.Plan.Token.Live || d.Plan.Token.ApprovedBy != "window" {
		t.Fatalf("detail after approval = %+v; want approved by window with a live token", d.Plan)
	}
	j, err := f.OpsJournal(p.Project)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]any{"detail": d, "journal": j, "prompt": prompt} {
		if strings.Contains(asJSON(t, v), token) {
			t.Errorf("the token appears in the %s", what)
		}
	}

	// A wrong token runs nothing and keeps the right one valid.
	if _, err := f.OpsApply(p.ID, "not-the-token"); !errors.Is(err, ops.ErrTokenUnknown) {
		t.Fatalf("apply with a wrong token = %v; want unknown token", err)
	}
	if _, err := f.OpsApply(p.ID, "  "); err == nil {
		t.Fatal("apply without a token was accepted")
	}
	if readFile(t, filepath.Join(dir, "app.conf")) != "name=shop\nport=80\n" {
		t.Fatal("a refused apply changed app.conf")
	}
	applied, err := f.OpsApply(p.ID, " "+token+"\n")
	if err != nil || applied.Status != ops.StatusApplied || applied.ExitCode != 0 {
		t.Fatalf("apply = %+v, %v; want applied with exit 0", applied, err)
	}
	if got := readFile(t, filepath.Join(dir, "app.conf")); got != "name=shop\nport=8080\n" {
		t.Fatalf("app.conf after the apply = %q", got)
	}
	if _, err := f.OpsApply(p.ID, token); !errors.Is(err, ops.ErrTokenUsed) {
		t.Fatalf("replayed token = %v; want already used", err)
	}

	ver, err := f.OpsVerify(p.ID)
	if err != nil || ver.Status != ops.StatusVerified || len(ver.Assertions) != 2 || !ver.Assertions[0].Passed {
		t.Fatalf("verify = %+v, %v; want both assertions passed", ver, err)
	}
	d, err = f.OpsPlanDetail(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	v := d.Verification
	if v == nil || v.Status != ops.StatusVerified || len(v.Assertions) != 2 {
		t.Fatalf("verification in the detail = %+v; want the verify run", v)
	}
	if a := v.Assertions[0]; a.Name != "port is 8080" || !a.Passed || !strings.Contains(a.Output, "port=8080") || a.ExpectText != "port=8080" || a.Command != "grep port= app.conf" {
		t.Errorf("first assertion in the detail = %+v", a)
	}
	kinds := map[string]int{}
	for _, a := range d.Evidence {
		kinds[a.Kind]++
	}
	if kinds[ops.ArtifactDiff] != 1 || kinds[ops.ArtifactSnapshotBefore] != 1 || kinds[ops.ArtifactSnapshotAfter] != 1 || kinds[ops.ArtifactVerify] != 2 {
		t.Errorf("evidence kinds = %v; want a diff, both snapshots and two verify outputs", kinds)
	}

	j, err = f.OpsJournal(p.Project)
	if err != nil || j.Verification == nil || !j.Verification.OK || j.VerifyError != "" {
		t.Fatalf("journal = %+v, %v; want the chain intact", j, err)
	}
	var events []string
	approvedSeq := int64(0)
	for _, e := range j.Entries {
		events = append(events, e.Event)
		if e.Event == ops.EventApproved {
			approvedSeq = e.Seq
			if e.Actor != "window" || detailOf(e)["hash"] != p.Hash {
				t.Errorf("approved entry = %+v; want by window with the plan hash", e)
			}
		}
	}
	want := "planned diff_attached approved apply_refused apply_started apply_finished apply_refused verified"
	if strings.Join(events, " ") != want {
		t.Errorf("journal events = %s\nwant %s", strings.Join(events, " "), want)
	}
	projects, err := f.OpsProjects()
	if err != nil || len(projects) != 1 || projects[0] != p.Project {
		t.Errorf("projects = %v, %v; want [%s]", projects, err, p.Project)
	}

	// Someone edits the database (dropping the append-only trigger first): the window names the row.
	if err := core.DB.Exec("DROP TRIGGER ops_journal_no_update").Error; err != nil {
		t.Fatal(err)
	}
	if err := core.DB.Exec("UPDATE ops_journal_entries SET actor = 'bob' WHERE seq = ? AND project = ?", approvedSeq, p.Project).Error; err != nil {
		t.Fatal(err)
	}
	j, err = f.OpsJournal(p.Project)
	if err != nil || j.Verification == nil || j.Verification.OK || len(j.Verification.Problems) == 0 {
		t.Fatalf("journal after an edit = %+v, %v; want a problem", j, err)
	}
	if pr := j.Verification.Problems[0]; pr.Kind != ops.ProblemEdited || pr.Seq != approvedSeq {
		t.Errorf("problem = %+v; want edited at seq %d", pr, approvedSeq)
	}
}

// Concurrent approvals from the window give one token; the others are refused and
// reveal nothing.
func TestOpsApproveConcurrentFromTheWindow(t *testing.T) {
	if !inChild(t) {
		return
	}
	_, f, p, _ := opsWindow(t, "cp new.conf app.conf", true)
	const n = 8
	var wg sync.WaitGroup
	results := make([]*ops.ApproveResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = f.OpsApprove(p.ID, p.Hash, "") })
	}
	wg.Wait()
	tokens := 0
	for i := range n {
		switch {
		case errs[i] == nil && results[i] != nil && results[i].Token != "":
			tokens++
		case errors.Is(errs[i], ops.ErrLiveToken) && results[i] == nil:
		default:
			t.Errorf("approval %d = %+v, %v; want a token or refused with a live token", i, results[i], errs[i])
		}
	}
	if tokens != 1 {
		t.Fatalf("%d tokens minted by %d concurrent approvals; want exactly 1", tokens, n)
	}
}

// Reject needs a reason, revokes a live token (an apply with it then runs nothing), and
// the reason is journaled.
func TestOpsRejectFromTheWindow(t *testing.T) {
	if !inChild(t) {
		return
	}
	_, f, p, dir := opsWindow(t, "cp new.conf app.conf", true)
	res, err := f.OpsApprove(p.ID, p.Hash, "5m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.OpsReject(p.ID, "  "); err == nil {
		t.Fatal("a reject without a reason was accepted")
	}
	v, err := f.OpsReject(p.ID, "wrong maintenance window")
	if err != nil || v.Status != ops.StatusRejected || v.Token == nil || !v.Token.Revoked {
		t.Fatalf("reject = %+v, %v; want rejected with the token revoked", v, err)
	}
	if _, err := f.OpsApply(p.ID, res.Token); err == nil {
		t.Fatal("the revoked token applied")
	}
	if readFile(t, filepath.Join(dir, "app.conf")) != "name=shop\nport=80\n" {
		t.Fatal("a rejected plan changed app.conf")
	}
	j, err := f.OpsJournal(p.Project)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range j.Entries {
		if e.Event == ops.EventRejected && e.Actor == "window" && detailOf(e)["reason"] == "wrong maintenance window" {
			found = true
		}
	}
	if !found {
		t.Errorf("no rejected entry with the reason in %+v", j.Entries)
	}
}

// An apply that runs and fails is a result with its reason, not an error; the token is spent.
func TestOpsApplyFailureFromTheWindow(t *testing.T) {
	if !inChild(t) {
		return
	}
	_, f, p, _ := opsWindow(t, "cp new.conf no-such-dir/app.conf", true)
	res, err := f.OpsApprove(p.ID, p.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.OpsApply(p.ID, res.Token)
	if err != nil || out.Status != ops.StatusFailed || out.ExitCode == 0 || out.Reason == "" {
		t.Fatalf("failed apply = %+v, %v; want a failed result with its reason", out, err)
	}
	if _, err := f.OpsApply(p.ID, res.Token); !errors.Is(err, ops.ErrTokenUsed) {
		t.Errorf("the token after a failed apply = %v; want spent", err)
	}
	d, err := f.OpsPlanDetail(p.ID)
	if err != nil || d.Plan.Status != ops.StatusFailed {
		t.Fatalf("detail = %+v, %v; want failed", d, err)
	}
}

// detailOf is a journal entry's detail as an object (nil when it is not one).
func detailOf(e ops.JournalEntryView) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(e.Detail, &m)
	return m
}

// Without a core part the window says so instead of panicking.
func TestOpsWithoutTheCore(t *testing.T) {
	f := NewFacade(nil)
	if _, err := f.OpsPlanDetail("op-x"); !errors.Is(err, errNoCore) {
		t.Errorf("detail without a core = %v", err)
	}
	if _, err := f.OpsJournal("p"); !errors.Is(err, errNoCore) {
		t.Errorf("journal without a core = %v", err)
	}
}

// lastVerification reads journal details written by the core, but the database can be
// edited: whatever the detail holds, it never panics, and it reports only assertions the
// detail names.
func FuzzLastVerification(f *testing.F) {
	f.Add(`{"assertions":[{"index":0,"command":"grep port= app.conf","passed":true,"exit_code":0,"output_sha256":"ab"}]}`, "grep port= app.conf", "ab")
	f.Add(`{"assertions":[{"index":7,"command":"x"},{"index":-1}]}`, "x", "")
	f.Add(`{"assertions":null}`, "", "")
	f.Add(`[1,2]`, "", "")
	f.Fuzz(func(t *testing.T, detail, source, sha string) {
		p := &ops.PlanView{ID: "op-1", Plan: ops.OperationPlan{Verify: []ops.Assertion{{Name: "port", Command: "grep port= app.conf", ExpectText: "port=8080"}}}}
		entries := []ops.JournalEntryView{{Seq: 1, Event: ops.EventVerified, Status: ops.StatusVerified, Detail: json.RawMessage(detail)}}
		ev := []ops.ArtifactView{{Kind: ops.ArtifactVerify, Source: source, SHA256: sha, Content: "out"}}
		res := lastVerification(p, entries, ev)
		if res == nil {
			return
		}
		var d struct {
			Assertions []json.RawMessage `json:"assertions"`
		}
		if err := json.Unmarshal([]byte(detail), &d); err != nil || len(res.Assertions) != len(d.Assertions) {
			t.Fatalf("%d assertions from a detail naming %d (%v)", len(res.Assertions), len(d.Assertions), err)
		}
		for _, a := range res.Assertions {
			if a.Output != "" && a.Command != source {
				t.Fatalf("output of %q shown for assertion %q", source, a.Command)
			}
		}
	})
}

// TestLastVerificationCarriesTheConfirm: a commit-confirm plan's confirm outcome (the
// journal entry after its verify) reaches the window with the status it left; a later
// re-verify, which never confirms, shows none.
func TestLastVerificationCarriesTheConfirm(t *testing.T) {
	p := &ops.PlanView{ID: "op-1", Plan: ops.OperationPlan{Verify: []ops.Assertion{{Command: "grep -c x running.conf"}}}}
	verified := ops.JournalEntryView{Seq: 6, Event: ops.EventVerified, Status: ops.StatusVerified,
		Detail: json.RawMessage(`{"assertions":[{"index":0,"command":"grep -c x running.conf","passed":true}]}`)}
	for _, tc := range []struct {
		name       string
		entries    []ops.JournalEntryView
		outcome    api.ConfirmOutcome
		status     ops.Status
		wantReason string
	}{
		{"confirmed", []ops.JournalEntryView{verified, {Seq: 7, Event: ops.EventConfirmed, Status: ops.StatusVerified,
			Detail: json.RawMessage(`{"command":"./fakevyos confirm","exit_code":0,"deadline":"2026-09-04T12:10:00Z"}`)}}, api.ConfirmSent, ops.StatusVerified, ""},
		{"withheld", []ops.JournalEntryView{verified, {Seq: 7, Event: ops.EventConfirmWithheld, Status: ops.StatusVerifyFailed,
			Detail: json.RawMessage(`{"command":"./fakevyos confirm","exit_code":-1,"reason":"the rollback window ended"}`)}}, api.ConfirmWithheld, ops.StatusVerifyFailed, "the rollback window ended"},
		{"re-verified after the confirm", []ops.JournalEntryView{verified, {Seq: 7, Event: ops.EventConfirmed, Status: ops.StatusVerified,
			Detail: json.RawMessage(`{}`)}, {Seq: 8, Event: ops.EventVerified, Status: ops.StatusVerified, Detail: verified.Detail}}, "", ops.StatusVerified, ""},
		{"edited detail", []ops.JournalEntryView{verified, {Seq: 7, Event: ops.EventConfirmFailed, Status: ops.StatusVerifyFailed,
			Detail: json.RawMessage(`[1]`)}}, api.ConfirmFailed, ops.StatusVerifyFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := lastVerification(p, tc.entries, nil)
			if res == nil || res.Status != tc.status {
				t.Fatalf("result %+v", res)
			}
			if tc.outcome == "" {
				if res.Confirm != nil {
					t.Fatalf("a re-verify shows a confirm: %+v", res.Confirm)
				}
				return
			}
			if res.Confirm == nil || res.Confirm.Outcome != tc.outcome || res.Confirm.Reason != tc.wantReason {
				t.Fatalf("confirm %+v", res.Confirm)
			}
		})
	}
}
