//go:build linux

package egress

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A stray helper variable without the helper's socket pair leaves a program alone.
func TestListenHelperNeedsItsSocket(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestListenHelperNeedsItsSocket$", "-test.v")
	cmd.Env = append(os.Environ(), listenHelperEnv+"=127.0.0.1:0", "EGRESS_STRAY_CHILD=1")
	if os.Getenv("EGRESS_STRAY_CHILD") == "1" {
		return // reached: init did not take this process over
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestListenHelperNeedsItsSocket") {
		t.Fatalf("a stray %s took the program over: %v\n%s", listenHelperEnv, err, out)
	}
}

func TestListenInNetnsBadInput(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:3128", "example.com:80", "127.0.0.1", "10.0.0.1:80"} {
		if _, err := ListenInNetns(os.Getpid(), addr); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("ListenInNetns(%q) = %v, want a loopback error", addr, err)
		}
	}
	if _, err := ListenInNetns(1<<30, "127.0.0.1:0"); err == nil {
		t.Error("a missing process gave no error")
	}
}
