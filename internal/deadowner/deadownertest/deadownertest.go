// Package deadownertest makes the stand-ins for a dead owner's pid that tests of
// recovery need: a live unrelated process that holds it, and a zombie.
package deadownertest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StandIns starts a live unrelated process (`sleep`, as after a reboot) and a zombie
// (exited, not yet reaped), both ended by the test's cleanup, and returns their pids.
func StandIns(t testing.TB) (live, zombie int) {
	t.Helper()
	l := exec.Command("sleep", "1000")
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Process.Kill(); l.Wait() })
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { z.Wait() }) // not reaped before: a zombie meanwhile
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(z.Process.Pid) + "/stat"); strings.Contains(string(b), ") Z") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in never became a zombie")
		}
	}
	return l.Process.Pid, z.Process.Pid
}
