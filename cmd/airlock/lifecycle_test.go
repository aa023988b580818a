package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jsonIn runs the CLI with --json in dir and returns the object it printed.
func (in *instance) jsonIn(dir string, args ...string) map[string]any {
	in.t.Helper()
	c := in.cmd(append(args, "--json")...)
	c.Dir = dir
	out, err := c.Output()
	if err != nil {
		in.t.Fatalf("%v: %v %s", args, err, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		in.t.Fatalf("%v printed %s", args, out)
	}
	return m
}

// runTask adds a task running cmd in ws, runs it now and waits until it succeeded; it
// returns the run's id.
func (in *instance) runTask(name, ws, cmd string) string {
	in.t.Helper()
	if _, stderr, code := in.run("task", "add", "--name", name, "--cwd", ws, "--", "sh", "-c", cmd); code != 0 {
		in.t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", name); code != 0 {
		in.t.Fatalf("run-now: %s", stderr)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := in.run("runs", "list", "--json", "--task", name)
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && runs[0]["status"] == "succeeded" {
			return fmt.Sprint(runs[0]["id"])
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("the run of %s never succeeded: %s", name, out)
		}
	}
}

// The database moved aside (as the error for a damaged one advises): the new one's
// run #1 shows only its own output in `airlock runs logs 1`, never the old run #1's.
func TestRunsLogsAfterANewDatabase(t *testing.T) {
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-newdb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	in.writeConfig(fmt.Sprintf("[workspace]\nroots = [%q]\n", ws))
	d := in.startDaemon()
	if id := in.runTask("old", ws, "echo old-task-output"); id != "1" {
		t.Fatalf("the first run is #%s", id)
	}
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	db := filepath.Join(in.home, "data", "airlock.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(db+suffix, db+".aside"+suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}

	in.startDaemon()
	if id := in.runTask("new", ws, "echo new-task-output"); id != "1" {
		t.Fatalf("the new database's first run is #%s", id)
	}
	logs, stderr, code := in.run("runs", "logs", "1")
	if code != 0 || strings.Contains(logs, "old-task-output") || !strings.Contains(logs, "new-task-output") {
		t.Fatalf("runs logs 1 in the new database (exit %d): %s%s", code, logs, stderr)
	}
}

// The core dies (kill -9) in the middle of an apply: `airlock ops apply` says the
// outcome is unknown and what to do, and each way out it offers works: the next start
// records the plan failed, a fresh diff can be attached, and the plan can be rejected.
func TestCoreDyingMidApplyFromTheCLI(t *testing.T) {
	needKeyring(t)
	in := newInstance(t)
	password := in.pamProof("")
	d := in.startDaemon()
	work := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(work, 0o755)
	plan := `{"target":{"provider":"file","device":"out.txt"},"intent":"append slowly","workdir":".",
		"apply":{"shell":"echo started > started.txt; sleep 60; echo applied >> out.txt"},"diff":{"argv":["echo","+applied"]},
		"steps":[{"description":"append","effect":"file grows","reversibility":"reversible","blast_radius":"low"}],
		"verify":[{"command":"cat out.txt","expect_text":"applied"}]}`
	os.WriteFile(filepath.Join(work, "plan.json"), []byte(plan), 0o644)
	js := func(args ...string) map[string]any { t.Helper(); return in.jsonIn(work, args...) }
	p := js("ops", "plan", "--file", filepath.Join(work, "plan.json"))
	id, hash := p["id"].(string), p["hash"].(string)
	js("ops", "diff", id, "--run")
	out := in.onTTY(hash[:8]+"\n"+password+"\n", "ops", "approve", id)
	i := strings.Index(out, "token: ")
	if i < 0 {
		t.Fatalf("no token printed:\n%s", out)
	}
	token := strings.Fields(out[i+len("token: "):])[0]

	apply := in.cmd("ops", "apply", id, "--token", token)
	var stderr strings.Builder
	apply.Stderr = &stderr
	if err := apply.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(work, "started.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the apply never started: %s", stderr.String())
		}
	}
	d.Process.Signal(syscall.SIGKILL)
	d.Wait()
	if err := apply.Wait(); err == nil {
		t.Fatal("ops apply succeeded though the core died")
	}
	for _, want := range []string{"outcome is unknown", "start Airlock again", "airlock ops diff " + id + " --run", "airlock ops reject " + id} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("ops apply when the core died says:\n%s\nwant %q", stderr.String(), want)
		}
	}

	in.startDaemon()
	if st := js("ops", "show", id)["status"]; st != "failed" {
		t.Fatalf("after the restart the plan is %v, want failed", st)
	}
	if d := js("ops", "diff", id, "--run"); d["status"] != "diffed" {
		t.Fatalf("a fresh diff after the restart: %v", d)
	}
	if _, stderr, code := in.run("ops", "reject", id, "--reason", "outcome unknown"); code != 0 {
		t.Fatalf("reject after the restart: %s", stderr)
	}
}
