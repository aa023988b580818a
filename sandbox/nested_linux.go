package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// Enclosing reports whether this process runs inside an Airlock bubblewrap
// sandbox, and that sandbox's network_access. Both must hold: the variable the sandbox
// sets (EnvEnclosingNetwork) and a user namespace other than the initial one, which no
// environment can fake. (A process that could enter a user namespace of its own to fake
// it already runs unconfined on the host: it gains nothing.)
func Enclosing() (NetworkMode, bool) {
	v := NetworkMode(os.Getenv(EnvEnclosingNetwork))
	switch v {
	case NetworkOff, NetworkAllowlist, NetworkOn:
	default:
		return "", false
	}
	if !inUserNamespace() {
		return "", false
	}
	return v, true
}

// inUserNamespace reports whether this process is in a user namespace other than the
// initial one, whose uid_map is the identity over the whole range.
func inUserNamespace() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == strconv.FormatUint(1<<32-1, 10))
}

// nestedNetwork is the network of a sandbox nested in one whose network_access is
// outer: the whole network only when both are on; otherwise TCP to the enclosing
// namespace's services alone, its ask-only channel and, under an allowlist, its egress
// proxy (whose lists then apply). Nothing else is reachable there anyway: the ports are
// the Landlock rules' defence in depth.
func nestedNetwork(inner, outer NetworkMode) (all bool, ports []uint16) {
	if inner.On() && outer.On() {
		return true, nil
	}
	ports = []uint16{addrPort(AskAddr)}
	if inner != NetworkOff && outer == NetworkAllowlist {
		ports = append(ports, addrPort(EgressAddr))
	}
	return false, ports
}

func addrPort(addr string) uint16 {
	i := strings.LastIndexByte(addr, ':')
	p, _ := strconv.ParseUint(addr[i+1:], 10, 16)
	return uint16(p)
}
