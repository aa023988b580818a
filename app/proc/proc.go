// Package proc reads what the core needs to know of other processes from /proc: a
// process's parent and controlling terminal, whether it descends from another, and
// whether it runs inside one of the sandboxes the core started. It links no database and
// no other Airlock package.
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat returns the fields of /proc/PID/stat after the command name (state, ppid,
// pgrp, session, tty_nr, …). The name may hold spaces and parentheses, so the fields
// start after the last ')'.
func Stat(pid int) ([]string, error) {
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

// ParentPID is pid's parent.
func ParentPID(pid int) (int, error) {
	f, err := Stat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

// HasControllingTTY reports whether pid has a controlling terminal (tty_nr != 0).
func HasControllingTTY(pid int) bool {
	f, err := Stat(pid)
	if err != nil {
		return false
	}
	tty, err := strconv.Atoi(f[4])
	return err == nil && tty != 0
}

// DescendsFrom reports whether pid is ancestor or one of its descendants, by the
// parent chain in /proc.
func DescendsFrom(pid, ancestor int) bool {
	return ancestor > 0 && anyAncestor(pid, func(p int) bool { return p == ancestor })
}

// anyAncestor reports whether match holds for pid or one of its ancestors below init,
// walking at most 256 parents (a chain that does not end is not followed forever).
func anyAncestor(pid int, match func(int) bool) bool {
	for i := 0; i < 256 && pid > 1; i++ {
		if match(pid) {
			return true
		}
		parent, err := ParentPID(pid)
		if err != nil {
			return false
		}
		pid = parent
	}
	return false
}

// Children lists the processes whose parent is pid (none when /proc cannot be read).
func Children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, err := ParentPID(p); err == nil && pp == pid {
			out = append(out, p)
		}
	}
	return out
}

// Cmdline is pid's argument vector, from /proc/PID/cmdline.
func Cmdline(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"), nil
}
