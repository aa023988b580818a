package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// procStat returns the fields of /proc/PID/stat after the command name (state, ppid,
// pgrp, session, tty_nr, …). The name may hold spaces and parentheses, so the fields
// start after the last ')'.
func procStat(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 5 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return f, nil
}

// parentPID is pid's parent.
func parentPID(pid int) (int, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

// hasControllingTTY reports whether pid has a controlling terminal (tty_nr != 0).
func hasControllingTTY(pid int) bool {
	f, err := procStat(pid)
	if err != nil {
		return false
	}
	tty, err := strconv.Atoi(f[4])
	return err == nil && tty != 0
}

// descendsFrom reports whether pid is ancestor or one of its descendants, by the
// parent chain in /proc.
func descendsFrom(pid, ancestor int) bool {
	if ancestor <= 0 {
		return false
	}
	for i := 0; i < 256 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		parent, err := parentPID(pid)
		if err != nil {
			return false
		}
		pid = parent
	}
	return false
}

// trackSandboxes returns an OnStart callback that records each sandbox pid with the
// core (the local API refuses state-changing requests from inside them) and a done
// func that forgets them all when the run ends.
func (c *Core) trackSandboxes(next func(int)) (onStart func(int), done func()) {
	var mu sync.Mutex
	var forget []func()
	onStart = func(pid int) {
		mu.Lock()
		forget = append(forget, c.RegisterSandbox(pid))
		mu.Unlock()
		if next != nil {
			next(pid)
		}
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range forget {
			f()
		}
		forget = nil
	}
	return onStart, done
}
