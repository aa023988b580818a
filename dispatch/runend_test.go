package dispatch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withDataDir puts the database and the run logs under dir.
func withDataDir(dir string) harnessOpt {
	return func(h *harness) {
		h.dbPath = filepath.Join(dir, "airlock.db")
		h.logDir = filepath.Join(dir, "runs")
	}
}

// smallDisk mounts a 4 MiB tmpfs for the test (root only) and returns it with a fill
// that takes the rest of its space and an unfill that frees it.
func smallDisk(t *testing.T) (dir string, fill, unfill func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (the full-disk case); run the test as root")
	}
	dir = filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): the full-disk case needs one", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	filler := filepath.Join(dir, "filler")
	fill = func() {
		f, err := os.Create(filler)
		if err != nil && !errors.Is(err, syscall.ENOSPC) {
			t.Fatal(err)
		}
		if f != nil {
			_, err = io.Copy(f, zeros{})
			f.Close()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
		}
	}
	unfill = func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	return dir, fill, unfill
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// fullDiskRun starts a run on a small disk, fills the disk, lets the run end and waits
// until its end is being retried, which Run, Runs and Cancel say with the way out.
func fullDiskRun(t *testing.T, h *harness, fill func()) Run {
	t.Helper()
	gate := filepath.Join(h.ws, "go")
	tk := h.task(TaskSpec{Name: "ends-on-a-full-disk", Cwd: h.ws,
		Argv: []string{"sh", "-c", "echo started; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo finished-well"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusRunning)
	waitLog(t, r.LogPath, "started")
	fill()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got Run
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = h.d.Run(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got.Reason, "recording its end failed") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"finished (succeeded)", "recording its end failed: disk full", "retrying", "free space"} {
		if !strings.Contains(got.Reason, want) {
			t.Fatalf("run #%d while its end cannot be written is %s: %q; want it to say %q", r.ID, got.Status, got.Reason, want)
		}
	}
	list, err := h.d.Runs(ctx, RunFilter{})
	if err != nil || len(list) == 0 || list[0].ID != r.ID || !strings.Contains(list[0].Reason, "disk full") {
		t.Fatalf("runs list: %+v, %v", list, err)
	}
	err = h.d.Cancel(ctx, r.ID, "cli")
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "free space") || !errors.Is(err, ErrInvalid) {
		t.Fatalf("cancel while its end is retried: %v; want why (disk full) and the way out (free space)", err)
	}
	// The window hears it too (published just after the state the list reads).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(h.ev.text(), "recording its end failed: disk full"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the person was not told: %s", h.ev.text())
		}
	}
	return r
}

// A full disk when a run ends: its end is retried until it lands (once space is freed),
// never left running; meanwhile the run says what is happening and the way out.
func TestFullDiskAtTheEndIsRetried(t *testing.T) {
	dir, fill, unfill := smallDisk(t)
	h := newHarness(t, withDataDir(dir), withOptions(func(o *Options) { o.Exclusive = true }))
	h.start()
	r := fullDiskRun(t, h, fill)
	unfill()
	done := h.wait(r.ID, StatusSucceeded)
	if done.Reason != "" || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Fatalf("the run's end as it landed: %+v", done)
	}
	// Removed once the database took the end (just after it shows).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(endPath(done.LogPath)); os.IsNotExist(err) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the end's side file outlived the recorded end: %v", err)
		}
	}
}

// A full disk at the end, then the app stops before space is freed: the next start
// records the run's real outcome (succeeded, from the file beside its log), not
// interrupted.
func TestFullDiskAtTheEndSurvivesARestart(t *testing.T) {
	dir, fill, unfill := smallDisk(t)
	h := newHarness(t, withDataDir(dir), withOptions(func(o *Options) { o.Exclusive = true }))
	h.start()
	r := fullDiskRun(t, h, fill)
	h.closeAll()
	unfill()
	h.open()
	h.start()
	done := h.wait(r.ID, StatusSucceeded, StatusInterrupted)
	if done.Status != StatusSucceeded || !strings.Contains(done.Reason, "beside its log") || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Fatalf("after the restart run #%d is %s (%s), want succeeded, recorded from beside its log", r.ID, done.Status, done.Reason)
	}
}

// The end written into the reserved room reads back as written; a reason too long for
// the room is cut (on a character boundary), never spilling past it; a blank room or no
// file is no end.
func TestEndFile(t *testing.T) {
	code := 3
	long := strings.Repeat("é", endFileSize)
	tests := []struct {
		name string
		end  endRecord
	}{
		{"a short end", endRecord{Status: StatusFailed, Reason: "exit status 3", ExitCode: &code, LogBytes: 10}},
		{"a reason longer than the room", endRecord{Status: StatusFailed, Reason: long, ExitCode: &code}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "1-x.end")
			if err := reserveEnd(path); err != nil {
				t.Fatal(err)
			}
			if _, ok := readEnd(path); ok {
				t.Fatal("a blank room reads as an end")
			}
			if err := writeEnd(path, tt.end); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(path); fi.Size() != endFileSize {
				t.Fatalf("the end grew the file to %d bytes", fi.Size())
			}
			got, ok := readEnd(path)
			if !ok || got.Status != tt.end.Status || got.ExitCode == nil || *got.ExitCode != code {
				t.Fatalf("read back %+v, %v", got, ok)
			}
			if !strings.HasPrefix(tt.end.Reason, strings.TrimSuffix(got.Reason, "…")) {
				t.Fatalf("reason read back is not a prefix of the written one: %q", got.Reason)
			}
		})
	}
	if _, ok := readEnd(filepath.Join(t.TempDir(), "none.end")); ok {
		t.Fatal("no file reads as an end")
	}
	if err := reserveEnd(filepath.Join(t.TempDir(), "x", "1.end")); err == nil {
		t.Fatal("reserving in a missing directory did not fail")
	}
}
