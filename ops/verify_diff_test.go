package ops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerifyRecordsEvidence(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.plan()
	two := 2
	in.Verify = []Assertion{
		{Name: "line written", Command: "grep -c applied out.txt", ExpectText: "1"},
		{Name: "file exists", Command: "test -f out.txt"},
		{Name: "no other file", Command: "ls missing.txt", ExpectExit: &two},
	}
	v, token := e.approved(t, in)
	if _, err := e.svc.Verify(ctx, v.ID, "agent"); err == nil {
		t.Fatal("verify before apply was allowed")
	}
	if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.Verify(ctx, v.ID, "agent")
	if err != nil || res.Status != StatusVerified {
		t.Fatalf("verify: %+v %v", res, err)
	}
	// The world changes; verifying again records the failure and its evidence.
	if err := os.WriteFile(filepath.Join(e.dir, "out.txt"), []byte("applied\napplied\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = e.svc.Verify(ctx, v.ID, "agent")
	if err != nil || res.Status != StatusVerifyFailed {
		t.Fatalf("verify after drift: %+v %v", res, err)
	}
	a := res.Assertions[0]
	if a.Passed || a.Output != "2\n" || a.SHA256 != sha256Hex([]byte("2\n")) || !strings.Contains(a.Reason, `does not contain "1"`) {
		t.Fatalf("evidence: %+v", a)
	}
	if !res.Assertions[1].Passed || !res.Assertions[2].Passed {
		t.Fatalf("other assertions: %+v", res.Assertions)
	}
	ev, err := e.svc.Evidence(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range ev {
		kinds[a.Kind]++
	}
	if kinds[ArtifactVerify] != 6 || kinds[ArtifactDiff] != 1 || kinds[ArtifactSnapshotBefore] != 1 || kinds[ArtifactSnapshotAfter] != 1 || kinds[ArtifactApplyOutput] != 1 {
		t.Fatalf("evidence kept: %v", kinds)
	}
	entries, _ := e.svc.Journal(ctx, JournalQuery{Project: v.Project, Event: EventVerifyFailed})
	if len(entries) != 1 || !strings.Contains(entries[0].Detail, sha256Hex([]byte("2\n"))) {
		t.Fatalf("journal: %+v", entries)
	}
}

func TestVerifyRechecksTheAllowlist(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v, token := e.approved(t, e.plan())
	if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Someone slips a mutation into the stored assertions and fixes up the hash column.
	editSpec(t, e, v.ID, true, func(p *OperationPlan) { p.Verify[0].Command = "sh -c 'touch pwned'" })
	res, err := e.svc.Verify(ctx, v.ID, "agent")
	if err != nil || res.Status != StatusVerifyFailed || !strings.HasPrefix(res.Assertions[0].Reason, "refused") {
		t.Fatalf("verify with an edited assertion: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pwned")); err == nil {
		t.Fatal("the edited assertion ran")
	}
}

func TestDiffInputs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v := e.create(t, e.plan())
	var ve *ValidationError
	if _, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID}); !errors.As(err, &ve) {
		t.Fatalf("no source: %v", err)
	}
	if _, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Run: true, File: "x"}); !errors.As(err, &ve) {
		t.Fatalf("two sources: %v", err)
	}
	// A command that fails attaches nothing.
	if _, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Command: &Command{Argv: []string{"sh", "-c", "echo boom >&2; exit 2"}}}); err == nil ||
		!strings.Contains(err.Error(), "exited 2") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing diff: %v", err)
	}
	if e.status(t, v.ID) != StatusDraft {
		t.Fatal("a failed diff changed the status")
	}
	// diff(1) exits 1 when files differ: accepted by default.
	os.WriteFile(filepath.Join(e.dir, "a"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "b"), []byte("y\n"), 0o644)
	d, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Command: &Command{Argv: []string{"diff", "-u", "a", "b"}}})
	if err != nil || d.Diff.ExitCode != 1 || !strings.Contains(d.Diff.Content, "+y") {
		t.Fatalf("diff -u: %+v %v", d, err)
	}
	// A binary file keeps its hash and says what it is; a text file is redacted.
	bin := []byte{0x50, 0x4b, 0x03, 0x04, 0, 1, 2, 3}
	os.WriteFile(filepath.Join(e.dir, "tfplan"), bin, 0o644)
	d, err = e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, File: "tfplan"})
	if err != nil || d.Diff.SHA256 != sha256Hex(bin) || !strings.HasPrefix(d.Diff.Content, "[binary file, 8 bytes") {
		t.Fatalf("binary diff: %+v %v", d, err)
	}
	os.WriteFile(filepath.Join(e.dir, "plan.txt"), []byte("+ password = hunter2\n"), 0o644)
	d, err = e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, File: "plan.txt"})
	if err != nil || strings.Contains(d.Diff.Content, "hunter2") || d.Diff.SHA256 != sha256Hex([]byte("+ password = hunter2\n")) {
		t.Fatalf("text diff: %+v %v", d, err)
	}
	if _, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, File: "."}); !errors.As(err, &ve) {
		t.Fatalf("a directory as diff: %v", err)
	}
	// An approved plan keeps the diff that was approved.
	e.approve(t, v)
	var se *StatusError
	if _, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Run: true}); !errors.As(err, &se) {
		t.Fatalf("diff of an approved plan: %v", err)
	}
}

func TestToolsSpeakJSON(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var in PlanInput
	raw := `{"target":{"provider":"local","device":"out.txt"},"intent":"append","apply":{"shell":"echo applied >> out.txt"},
		"diff":{"argv":["echo","+applied"]},"workdir":"` + e.dir + `","steps":[{"description":"append","effect":"one line",
		"reversibility":"reversible","blast_radius":"low"}],"verify":[{"command":"grep -c applied out.txt","expect_text":"1"}],"by":"agent"}`
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatal(err)
	}
	pv, err := e.svc.OpsPlan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.OpsDiff(ctx, DiffInput{PlanID: pv.ID, Run: true}); err != nil {
		t.Fatal(err)
	}
	// An agent cannot approve: the attestation does not come from its JSON.
	var ai ApproveInput
	json.Unmarshal([]byte(`{"plan_id":"`+pv.ID+`","ttl":"5m","confirm_hash_prefix":"`+pv.Hash[:8]+`","interactive":true}`), &ai)
	if _, err := e.svc.OpsApprove(ctx, ai, Attestation{}); !errors.Is(err, ErrNotInteractive) {
		t.Fatalf("agent approval: %v", err)
	}
	if _, err := e.svc.OpsApprove(ctx, ApproveInput{PlanID: pv.ID, TTL: "2h", ConfirmHashPrefix: pv.Hash[:8]}, Attestation{By: "alice", Interactive: true}); err == nil {
		t.Fatal("a 2h token was minted")
	}
	ar, err := e.svc.OpsApprove(ctx, ai, Attestation{By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.OpsApply(ctx, ApplyInput{PlanID: pv.ID, Token: ar.Token})
	if err != nil || res.Status != StatusApplied {
		t.Fatalf("apply: %+v %v", res, err)
	}
	vr, err := e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerified {
		t.Fatalf("verify: %+v %v", vr, err)
	}
	jo, err := e.svc.OpsJournal(ctx, JournalInput{PlanID: pv.ID, Verify: true})
	if err != nil || len(jo.Entries) != 7 || !jo.Verification.OK {
		t.Fatalf("journal: %+v %v", jo, err)
	}
	b, err := json.Marshal(jo)
	if err != nil || !strings.Contains(string(b), `"event":"apply_finished"`) {
		t.Fatalf("journal JSON: %s %v", b, err)
	}
	for _, name := range []string{ToolPlan, ToolDiff, ToolApprove, ToolApply, ToolVerify, ToolJournal} {
		if ToolDescriptions[name] == "" {
			t.Errorf("no description for %s", name)
		}
	}
}
