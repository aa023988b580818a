package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swapFile replaces path by a new file holding data, as a same-user process would: a
// rename, so a process running the old file (the fake router's loop) keeps its own.
func swapFile(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".swap"
	if err := os.WriteFile(tmp, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// The confirm of a commit-confirm plan runs under its approval, as the apply does: a
// fakevyos swapped in the workdir after the apply (one that opens every port and
// "confirms") is not what runs; the approved copy confirms the commit.
func TestConfirmRunsTheApprovedBytes(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	pv := applyCommitConfirm(t, e, commitConfirmPlan(t, e, 30, ""))
	swapFile(t, filepath.Join(e.dir, "fakevyos"), "#!/bin/sh\n"+
		"echo 'rule 99 accept all' >> running.conf\nrm -f pending rollback.conf\necho forged >> device.log\necho commit confirmed\n")
	res, err := e.svc.OpsVerify(context.Background(), VerifyInput{PlanID: pv.ID})
	if err != nil {
		t.Fatal(err)
	}
	log := readFile(t, filepath.Join(e.dir, "device.log"))
	if strings.Contains(log, "forged") || strings.Contains(readFile(t, filepath.Join(e.dir, "running.conf")), "rule 99") {
		t.Fatalf("the confirm ran the swapped fakevyos: device.log %q", log)
	}
	if res.Confirm == nil || res.Confirm.Outcome != ConfirmSent || !strings.HasSuffix(log, "confirmed\n") || res.Status != StatusVerified {
		t.Fatalf("the approved confirm did not confirm: %+v %+v; device.log %q", res, res.Confirm, log)
	}
}

// A confirm, or what a snapshot runs, that is not pinned is refused at approval with the
// way out; the snapshot's own reads of the live state are not pinned.
func TestApprovalPinsWhatConfirmAndSnapshotRun(t *testing.T) {
	e := newEnv(t)
	fakeDevice(t, e)
	for _, f := range []string{"confirm.sh", "show.sh"} {
		os.WriteFile(filepath.Join(e.dir, f), []byte("#!/bin/sh\n./fakevyos confirm\n"), 0o755)
	}
	cases := []struct {
		name     string
		confirm  Command
		snapshot Command
		inputs   []string
		want     string // "" when approved
	}{
		{"the example", Command{Argv: []string{"./fakevyos", "confirm"}}, Command{Argv: []string{"cat", "running.conf"}}, nil, ""},
		{"confirm script not declared", Command{Argv: []string{"./confirm.sh"}}, Command{}, nil,
			"does not hold ./confirm.sh, which the confirm command names"},
		{"confirm script declared", Command{Argv: []string{"./confirm.sh"}}, Command{}, []string{"confirm.sh"}, ""},
		{"confirm through a shell", Command{Shell: "sh confirm.sh"}, Command{}, nil, "declare it in inputs"},
		{"confirm by another spelling", Command{Argv: []string{".//fakevyos", "confirm"}}, Command{}, nil, ""},
		{"snapshot program not declared", Command{Argv: []string{"./fakevyos", "confirm"}}, Command{Argv: []string{"./show.sh"}}, nil,
			"does not hold ./show.sh, which the snapshot command names"},
		{"snapshot program declared", Command{Argv: []string{"./fakevyos", "confirm"}}, Command{Argv: []string{"./fakevyos", "show"}}, nil, ""},
		{"snapshot reads through a variable", Command{Argv: []string{"./fakevyos", "confirm"}}, Command{Shell: "sh \"$S\""}, nil, "cannot name"},
		{"snapshot shows the live state", Command{Argv: []string{"./fakevyos", "confirm"}}, Command{Shell: "cat running.conf device.log"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := commitConfirmPlan(t, e, 30, "")
			in.Confirm, in.Snapshot = tc.confirm, tc.snapshot
			in.Inputs = append(in.Inputs, tc.inputs...)
			in.Intent += " (" + tc.name + ")"
			v := e.create(t, in)
			e.diff(t, v.ID)
			_, perr := e.svc.ApprovalPrompt(context.Background(), v.ID)
			_, err := e.svc.Approve(context.Background(), v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], By: "alice", Interactive: true})
			switch {
			case tc.want == "" && (err != nil || perr != nil):
				t.Fatalf("refused: %v / prompt %v", err, perr)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "declare it in inputs")):
				t.Fatalf("approve = %v, want %q and the way out", err, tc.want)
			case tc.want != "" && (perr == nil || !strings.Contains(perr.Error(), tc.want)):
				t.Fatalf("the prompt does not refuse: %v", perr)
			}
			if err == nil {
				e.svc.Reject(context.Background(), v.ID, "next case", "alice")
			}
		})
	}
}

// The snapshot after the apply runs the approved copy of what it runs: an apply that
// replaces show.sh in the workdir (here by a script it runs) cannot change what the
// snapshot that records the outcome runs.
func TestSnapshotRunsTheApprovedBytes(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.dir, "show.sh"), []byte("#!/bin/sh\necho state: $(cat state.txt)\n"), 0o755)
	os.WriteFile(filepath.Join(e.dir, "forged.sh"), []byte("#!/bin/sh\necho state: all good\n"), 0o755)
	os.WriteFile(filepath.Join(e.dir, "state.txt"), []byte("v1\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "swap.sh"), []byte("echo v2 > state.txt\ncp forged.sh show.sh\n"), 0o644)
	in := e.plan()
	in.Target.Device = "state.txt"
	in.Apply = Command{Argv: []string{"sh", "swap.sh"}}
	in.Inputs = []string{"swap.sh", "show.sh"}
	in.Snapshot = Command{Argv: []string{"./show.sh"}}
	in.Verify = []Assertion{{Command: "grep -c v2 state.txt", ExpectText: "1"}}
	v, tok := e.approved(t, in)
	res, err := e.svc.Apply(context.Background(), v.ID, tok, ApplyOptions{By: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(e.dir, "show.sh")); !strings.Contains(got, "all good") {
		t.Fatalf("the apply did not replace show.sh: %q", got)
	}
	if res.SnapshotBefore == nil || res.SnapshotAfter == nil || !strings.Contains(res.SnapshotBefore.Content, "state: v1") ||
		!strings.Contains(res.SnapshotAfter.Content, "state: v2") {
		t.Fatalf("snapshots did not run the approved show.sh: before %+v after %+v", res.SnapshotBefore, res.SnapshotAfter)
	}
}
