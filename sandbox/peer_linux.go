package sandbox

import (
	"os"
	"slices"
	"strconv"
)

// IsSandboxedPeer reports whether the process pid (e.g. a local API peer from
// SO_PEERCRED) runs inside an Airlock sandbox: its PID namespace differs from
// ours, or it or one of its ancestors is a known sandbox root pid (as recorded
// through ExecRequest.OnStart). When the process cannot be inspected it
// answers true: the API must then refuse state-changing requests.
func IsSandboxedPeer(pid int, known []int) bool {
	if pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return false
	}
	own, err1 := os.Readlink("/proc/self/ns/pid")
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err1 != nil || err2 != nil || own != theirs {
		return true
	}
	for cur, depth := pid, 0; cur > 1 && depth < 256; depth++ {
		if slices.Contains(known, cur) {
			return true
		}
		next := parentPid(cur)
		if next <= 0 {
			return !processExists(cur) // vanished mid-walk: fail closed
		}
		cur = next
	}
	return false
}

func processExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
