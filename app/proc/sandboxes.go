package proc

import (
	"fmt"
	"os"
	"sync"
)

// Sandboxes remembers the host pids of the sandboxes the core started, so the local API
// can refuse state-changing requests from inside them. It is safe for concurrent use.
type Sandboxes struct {
	mu   sync.Mutex
	pids map[int]struct{}
}

// NewSandboxes returns an empty set.
func NewSandboxes() *Sandboxes { return &Sandboxes{pids: map[int]struct{}{}} }

// Add records a sandbox's host pid; the returned func forgets it.
func (s *Sandboxes) Add(pid int) func() {
	s.mu.Lock()
	s.pids[pid] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.pids, pid)
		s.mu.Unlock()
	}
}

// Contains reports whether pid runs inside a sandbox: it lives in another pid or user
// namespace than the core (every bubblewrap sandbox unshares both), or descends from a
// recorded sandbox pid.
func (s *Sandboxes) Contains(pid int) bool {
	if pid <= 0 {
		return true // unknown peer: treat as untrusted
	}
	for _, ns := range []string{"pid", "user"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err1 == nil && err2 == nil && mine != theirs {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pids) == 0 {
		return false
	}
	return anyAncestor(pid, func(p int) bool { _, ok := s.pids[p]; return ok })
}
