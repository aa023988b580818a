// Package deadowner says what has become of the process recorded as the owner of a run
// or an apply, once the core holds the database's exclusive lock (internal/sqlitedb.Lock)
// and so knows that no other core can be working on it. A pid is no proof of life: after
// a crash it may be a zombie, or after a reboot an unrelated process; the evidence is
// written into the record that ends the owner's work.
package deadowner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Evidence says why the owner recorded as pid on host is gone, for a record that ends
// its work: the lock is the proof, and what the pid is now is the detail.
func Evidence(host string, pid int) string {
	me, _ := os.Hostname()
	proof := "this core holds the database's exclusive lock, so no other core is working on it"
	switch {
	case pid <= 0:
		return proof + "; no owner pid was recorded"
	case host != "" && host != me:
		return fmt.Sprintf("%s; its owner, pid %d, ran on host %s, not this one (%s)", proof, pid, host, me)
	}
	return fmt.Sprintf("%s; its owner, pid %d, %s", proof, pid, Describe(pid))
}

// Describe says what pid is now: gone, a zombie, this very process (the pid was
// reused), or another process.
func Describe(pid int) string {
	if pid == os.Getpid() {
		return "is now this core (the pid was reused)"
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, perr := os.Stat("/proc/self/stat"); perr != nil {
			return describeNoProc(pid)
		}
		return "no longer exists"
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, so cut at the last ')'.
	s := string(stat)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "is now another process"
	}
	comm, rest := s[open+1:end], strings.Fields(s[end+1:])
	if len(rest) > 0 && (rest[0] == "Z" || rest[0] == "X") {
		return fmt.Sprintf("is now a zombie (%s), dead but not yet reaped", comm)
	}
	return fmt.Sprintf("is now another process (%s), which reused the pid", comm)
}
