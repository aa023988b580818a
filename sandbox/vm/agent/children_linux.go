package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Children tracks the commands the agent waits for itself, so that the init's reaper
// (ReapOrphans) collects only orphans and never steals the exit status of a command.
type Children struct {
	mu   sync.Mutex
	pids map[int]bool
}

// NewChildren returns an empty tracker.
func NewChildren() *Children { return &Children{pids: map[int]bool{}} }

// start starts cmd and records it under the lock the reaper takes, so the reaper cannot
// see it exit before it is recorded.
func (c *Children) start(cmd *exec.Cmd) error {
	if c == nil {
		return cmd.Start()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	c.pids[cmd.Process.Pid] = true
	return nil
}

// done forgets pid once its exec.Cmd has waited for it.
func (c *Children) done(pid int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.pids, pid)
	c.mu.Unlock()
}

// ReapOrphans waits for every zombie child of this process that is not a tracked command
// and returns how many it collected. PID 1 calls it on SIGCHLD.
func (c *Children) ReapOrphans() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, st := range stats {
		pid, ppid, state, ok := readStat(st)
		if !ok || ppid != self || state != 'Z' || c.pids[pid] {
			continue
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && got == pid {
			n++
		}
	}
	return n
}

// readStat parses pid, state and ppid from /proc/PID/stat ("pid (comm) S ppid ...").
func readStat(path string) (pid, ppid int, state byte, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	open := strings.IndexByte(s, ' ')
	if end < 0 || open < 0 || end+4 >= len(s) {
		return 0, 0, 0, false
	}
	pid, err = strconv.Atoi(s[:open])
	if err != nil {
		return 0, 0, 0, false
	}
	fields := strings.Fields(s[end+2:])
	if len(fields) < 2 {
		return 0, 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return pid, ppid, fields[0][0], err == nil
}
