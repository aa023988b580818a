package agent

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// waitZombie waits until pid is a zombie child of this process.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 2000 {
		if _, _, state, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid)); ok && state == 'Z' {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("pid %d never became a zombie", pid)
}

func TestReapOrphansSparesTrackedCommands(t *testing.T) {
	c := NewChildren()
	tracked := exec.Command("/bin/true")
	if err := c.start(tracked); err != nil {
		t.Fatal(err)
	}
	orphan, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	waitZombie(t, tracked.Process.Pid)
	waitZombie(t, orphan.Pid)

	c.ReapOrphans()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan.Pid)); err == nil {
		t.Error("the untracked zombie was not reaped")
	}
	if err := tracked.Wait(); err != nil {
		t.Fatalf("the tracked command lost its exit status to the reaper: %v", err)
	}
	c.done(tracked.Process.Pid)
}
