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
