package dispatch

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// startBus starts a private dbus-daemon and returns its address.
func startBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1",
		"--address=unix:path="+filepath.Join(t.TempDir(), "bus"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// logind's PrepareForSleep on the bus marks the gap as a sleep, even where the clocks
// alone would call it a clock set forward (no boot clock moved).
func TestPrepareForSleepOverDBus(t *testing.T) {
	addr := startBus(t)
	h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.SleepBus = addr }))
	h.start()
	tk := h.task(TaskSpec{Name: "nightly", Cwd: h.ws, Schedule: "*/30 * * * *"})

	logind, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer logind.Close()
	if reply, err := logind.RequestName(login1, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s on the test bus: %v %v", login1, reply, err)
	}
	emit := func(sleeping bool) {
		if err := logind.Emit("/org/freedesktop/login1", prepareForSleep, sleeping); err != nil {
			t.Fatal(err)
		}
	}
	// The dispatcher subscribes on its own goroutine: say "going to sleep" until it heard.
	deadline := time.Now().Add(30 * time.Second)
	for {
		emit(true)
		h.d.sched.mu.Lock()
		heard := !h.d.sched.sleepAt.IsZero()
		h.d.sched.mu.Unlock()
		if heard {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher did not hear PrepareForSleep(true)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.clock.Jump(2*time.Hour + 10*time.Second)
	emit(false)
	rs := h.watchRows(tk.ID, 2)
	if sp := rs[0]; sp.MissedCount != 3 || !strings.Contains(sp.Reason, "3 occurrences between") || !strings.Contains(sp.Reason, ": the machine was asleep") {
		t.Fatalf("span row: %d, %q; want 3 occurrences while the machine was asleep", sp.MissedCount, sp.Reason)
	}
	h.wait(rs[1].ID, StatusSucceeded)
}

// Without logind, the clocks tell a sleep (the boot clock counted it) from a clock set
// forward (only the wall clock moved) and from a clock set back (no gap).
func TestNoticeGapClassifies(t *testing.T) {
	base := ClockReading{Wall: t0, Monotonic: time.Hour, Boot: time.Hour}
	tests := []struct {
		name     string
		wall     time.Duration // how far each clock moved
		mono     time.Duration
		boot     time.Duration
		noBoot   bool
		wantGap  bool
		wantWhat string
	}{
		{"time passes", 15 * time.Second, 15 * time.Second, 15 * time.Second, false, false, ""},
		{"ntp slews", 15*time.Second + 300*time.Millisecond, 15 * time.Second, 15 * time.Second, false, false, ""},
		{"asleep", 3 * time.Hour, 5 * time.Second, 3 * time.Hour, false, true, causeAsleep},
		{"set forward", 3 * time.Hour, 5 * time.Second, 5 * time.Second, false, true, causeClockJump},
		{"set back", -time.Hour, 5 * time.Second, 5 * time.Second, false, false, ""},
		{"no boot clock", 3 * time.Hour, 5 * time.Second, 0, true, true, causeWallAhead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(nil)
			prev := base
			cur := ClockReading{Wall: t0.Add(tc.wall), Monotonic: base.Monotonic + tc.mono, Boot: base.Boot + tc.boot}
			if tc.noBoot {
				prev.Boot, cur.Boot = 0, 0
			}
			g, found := s.noticeGap(prev, cur)
			if found != tc.wantGap || g.cause != tc.wantWhat {
				t.Fatalf("gap %v %q, want %v %q", found, g.cause, tc.wantGap, tc.wantWhat)
			}
			if found && (s.causeOf(t0.Add(time.Hour)) != tc.wantWhat || s.causeOf(t0) != causeLate) {
				t.Fatalf("causeOf inside the gap %q, at its start %q", s.causeOf(t0.Add(time.Hour)), s.causeOf(t0))
			}
		})
	}
}
