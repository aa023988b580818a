package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitForPersonGivesBackTheSlot: with a concurrency of 1, a running run whose
// command waits for a person's answer is listed as waiting (its process keeps going) and
// gives back its slot, so another run starts and ends meanwhile; resumed, it holds the
// slot again. A wait that ends after its run ended takes no slot.
func TestWaitForPersonGivesBackTheSlot(t *testing.T) {
	h := newHarness(t, withOptions(func(o *Options) { o.Concurrency = 1 }))
	h.start()
	ctx := context.Background()
	// Each asker runs until the test creates its file.
	asker := func(name string) string {
		f := filepath.Join(h.ws, name+".go")
		h.task(TaskSpec{Name: name, Cwd: h.ws, Argv: []string{"sh", "-c", "while [ ! -e " + f + " ]; do sleep 0.02; done"}})
		return f
	}
	release := func(f string) {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goA, goB := asker("a"), asker("b")
	h.task(TaskSpec{Name: "quick", Cwd: h.ws})

	a := h.runNow("a")
	h.wait(a.ID, StatusRunning)
	resume := h.d.WaitForPerson(a.ID, "q1", "waiting for you: may it connect to example.test:443?")
	waiting, err := h.d.Runs(ctx, RunFilter{Waiting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(waiting) != 1 || waiting[0].ID != a.ID || waiting[0].Status != StatusRunning || waiting[0].WaitingFor != "q1" || waiting[0].Reason == "" {
		t.Fatalf("waiting runs: %+v", waiting)
	}
	h.wait(h.runNow("quick").ID, StatusSucceeded) // the slot was given back
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.d.slots); n != 1 {
		t.Errorf("after the answer, %d slots are taken; want 1 (the resumed run's)", n)
	}
	if r := h.wait(a.ID, StatusRunning); r.WaitingFor != "" || r.Reason != "" {
		t.Errorf("after the answer, run #%d still waits: %q (%s)", r.ID, r.WaitingFor, r.Reason)
	}
	release(goA)
	h.wait(a.ID, StatusSucceeded)

	// The run ends while its question is open: the late answer takes no slot.
	b := h.runNow("b")
	h.wait(b.ID, StatusRunning)
	resume = h.d.WaitForPerson(b.ID, "q2", "waiting for you")
	release(goB)
	h.wait(b.ID, StatusSucceeded)
	// Over for good once the dispatcher lets go of it (its slot accounting is done then).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		h.d.mu.Lock()
		_, active := h.d.active[b.ID]
		h.d.mu.Unlock()
		if !active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run #%d ended but the dispatcher still works on it", b.ID)
		}
	}
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.d.slots); n != 0 {
		t.Errorf("after a late answer, %d slots are taken; want none", n)
	}
	h.wait(h.runNow("quick").ID, StatusSucceeded)
}

// A run waiting for a person's answer is waiting, not stuck: its no-progress watchdog
// does not end it while it waits, however long, and counts its silence again from the
// answer; silence after that still ends it.
func TestWatchdogCountsAWaitForAPersonAsWaiting(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	gate := filepath.Join(h.ws, "answered")
	h.task(TaskSpec{Name: "agent", Cwd: h.ws, NoProgressTimeout: 300 * time.Millisecond,
		Argv: []string{"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.02; done; sleep 5"}})
	r := h.runNow("agent")
	h.wait(r.ID, StatusRunning)
	resume := h.d.WaitForPerson(r.ID, "q1", "waiting for you: may it rm -rf build?")
	time.Sleep(1200 * time.Millisecond) // four times the no-progress timeout, waiting
	if got, _ := h.d.Run(ctx, r.ID); got.Status != StatusRunning {
		t.Fatalf("a run waiting for a person was ended: %s (%s)", got.Status, got.Reason)
	}
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(gate, nil, 0o644)
	// Silent again after the answer (sleep 5): now the watchdog ends it.
	if got := h.wait(r.ID, StatusTimedOut, StatusFailed, StatusSucceeded); got.Status != StatusTimedOut || !strings.Contains(got.Reason, "no-progress timeout") {
		t.Errorf("ended, but not by the watchdog: %s (%s)", got.Status, got.Reason)
	}
}
