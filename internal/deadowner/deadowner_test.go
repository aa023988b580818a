package deadowner

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Each state a recorded pid can be in after its owner died is named: a live unrelated
// process holding it, a zombie, nothing, and this very process.
func TestDescribe(t *testing.T) {
	live := exec.Command("sleep", "1000")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	// Not waited for: it stays a zombie until the cleanup reaps it.
	for i := 0; i < 500 && !strings.Contains(Describe(zombie.Process.Pid), "zombie"); i++ {
		time.Sleep(10 * time.Millisecond)
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		pid  int
		want string
	}{
		{"another live process", live.Process.Pid, "another process (sleep)"},
		{"a zombie", zombie.Process.Pid, "zombie"},
		{"no process", gone.Process.Pid, "no longer exists"},
		{"this process", os.Getpid(), "this core"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.pid); !strings.Contains(got, tt.want) {
				t.Errorf("Describe(%d) = %q, want it to say %q", tt.pid, got, tt.want)
			}
			if ev := Evidence("", tt.pid); !strings.Contains(ev, "exclusive lock") || !strings.Contains(ev, tt.want) {
				t.Errorf("Evidence = %q: want the lock as proof and %q", ev, tt.want)
			}
		})
	}
	if ev := Evidence("elsewhere.example", 42); !strings.Contains(ev, "host elsewhere.example") {
		t.Errorf("another host: %q", ev)
	}
}
