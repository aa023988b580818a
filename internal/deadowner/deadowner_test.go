package deadowner

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/internal/deadowner/deadownertest"
)

// Each state a recorded pid can be in after its owner died is named: a live unrelated
// process holding it, a zombie, nothing, and this very process.
func TestDescribe(t *testing.T) {
	live, zombie := deadownertest.StandIns(t)

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		pid  int
		want string
	}{
		{"another live process", live, "another process (sleep)"},
		{"a zombie", zombie, "zombie"},
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
