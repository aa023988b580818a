package sandbox

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/airlock-app/airlock/api"
)

// Limits are a run's resource limits ([limits]; the wire type): memory.max, pids.max
// and cpu.max of the cgroup each run and each MCP bash call gets.
type Limits = api.Limits

// Setting keys of the limits in Policy.Sources (the config key names).
const (
	KeyLimitsMemory   = "limits.memory"
	KeyLimitsPids     = "limits.pids"
	KeyLimitsCPU      = "limits.cpu"
	KeyLimitsRequired = "limits.required"
)

// DefaultLimits are the limits a run gets when nothing sets them: enough for a build, and
// a fork bomb or a leak still takes down the run, never the desktop.
var DefaultLimits = Limits{Memory: "4GiB", Pids: 2048, CPU: "200%"}

// LimitUnlimited is the spelling of "no limit" for memory and cpu.
const LimitUnlimited = "max"

// Names of the limits in Result.Limit.
const (
	LimitMemory = "memory"
	LimitPids   = "pids"
)

// ErrLimitsUnavailable is returned by Exec when [limits] required = true and no cgroup
// Airlock can write is available to apply them.
var ErrLimitsUnavailable = errors.New("resource limits ([limits]) cannot be applied here")

// ErrBadLimit is wrapped by every refusal of a limit's value.
var ErrBadLimit = api.ErrBadLimit

// cgroupLimits are Limits as numbers; 0 is "no limit".
type cgroupLimits struct {
	memory     int64 // bytes
	pids       int64
	cpuPercent int64 // of one CPU
}

// ParseSize reads a size such as "4GiB", "512MiB", "2G", "64KiB" or a plain byte count.
func ParseSize(s string) (int64, error) { return api.ParseSize(s) }

// ValidateLimits checks the limits a layer sets (a department's defaults, a task's
// overrides, config.toml): each refusal wraps ErrBadLimit and says how to write it.
func ValidateLimits(l Limits) error { return l.Validate() }

func parseMemory(s string) (int64, error) { return api.ParseMemoryLimit(s) }
func parseCPU(s string) (int64, error)    { return api.ParseCPULimit(s) }
func checkPids(n int) (int64, error)      { return api.CheckPidsLimit(n) }

// parseLimits turns resolved limits into numbers (every field is set after Resolve).
func parseLimits(l Limits) (cgroupLimits, error) {
	var c cgroupLimits
	var err error
	if l.Memory != "" {
		if c.memory, err = parseMemory(l.Memory); err != nil {
			return c, err
		}
	}
	if l.Pids != 0 {
		if c.pids, err = checkPids(l.Pids); err != nil {
			return c, err
		}
	}
	if l.CPU != "" {
		if c.cpuPercent, err = parseCPU(l.CPU); err != nil {
			return c, err
		}
	}
	return c, nil
}

// lowerLimit reports whether limit a is stricter than b (0 is no limit).
func lowerLimit(a, b int64) bool { return a != 0 && (b == 0 || a < b) }

// LimitReached is the sentence a run ended by a limit shows in its outcome and log,
// e.g. "ended: the pids limit (512) was reached".
func LimitReached(limit string, l Limits) string {
	switch limit {
	case LimitPids:
		return fmt.Sprintf("ended: the pids limit (%d) was reached (raise [limits] pids, or the task's or department's limits, if it needs more processes)", l.Pids)
	case LimitMemory:
		return fmt.Sprintf("ended: the memory limit (%s) was reached (raise [limits] memory, or the task's or department's limits, if it needs more)", l.Memory)
	}
	return ""
}

// LimitsString says the limits in words ("memory 4GiB, pids 2048, cpu 200%"), as the
// run log and `airlock config` show them.
func LimitsString(l Limits) string {
	pids := "max"
	if l.Pids != 0 {
		pids = strconv.Itoa(l.Pids)
	}
	or := func(s string) string {
		if s == "" {
			return "max"
		}
		return s
	}
	return fmt.Sprintf("memory %s, pids %s, cpu %s", or(l.Memory), pids, or(l.CPU))
}

// ProbeLimits is the status probe of the cgroup the resource limits are applied with.
const ProbeLimits = "resource limits"

// noCgroupFix is the way out the no-cgroup message gives.
const noCgroupFix = "run Airlock where it may create cgroups: as a systemd user service with Delegate=yes " +
	"(systemctl --user edit airlock: [Service] Delegate=yes), or on a machine with cgroup v2 and the memory, pids and cpu controllers delegated to the user; " +
	"set [limits] required = true to refuse to run without them"

// limitsNotAppliedWarning is the sentence a command run without its limits carries.
func limitsNotAppliedWarning(l Limits, why error) string {
	return fmt.Sprintf("resource limits are NOT applied (%s): %v — a fork bomb or a leak in this command can take the machine down; %s", LimitsString(l), why, noCgroupFix)
}
