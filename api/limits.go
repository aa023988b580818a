package api

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits are the resource limits of a run or of one MCP bash call ([limits]): each runs
// in a cgroup of its own with these. In a layer (config.toml, a department's defaults, a
// task's overrides) an empty Memory or CPU and a zero Pids mean "not set here".
type Limits struct {
	// Memory is the cgroup's memory.max: a size ("4GiB", "512MiB", "2G") or "max" (none).
	Memory string `json:"memory,omitempty"`
	// Pids is pids.max: how many processes and threads the run may have at once.
	Pids int `json:"pids,omitempty"`
	// CPU is cpu.max as a share of one CPU ("200%": two CPUs' worth) or "max" (none).
	CPU string `json:"cpu,omitempty"`
}

// IsZero reports whether l sets nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// Over returns l with the fields o sets replaced.
func (l Limits) Over(o Limits) Limits {
	if o.Memory != "" {
		l.Memory = o.Memory
	}
	if o.Pids != 0 {
		l.Pids = o.Pids
	}
	if o.CPU != "" {
		l.CPU = o.CPU
	}
	return l
}

// ErrBadLimit is wrapped by every refusal of a limit's value.
var ErrBadLimit = errors.New("invalid limit")

// sizeUnits are the suffixes ParseSize accepts, longest first; bare K, M, G and T are
// binary, as cgroup tools and systemd read them.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// ParseSize reads a size such as "4GiB", "512MiB", "2G", "64KiB" or a plain byte count.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size: write it like \"1GiB\", \"512MiB\" or a number of bytes", s)
	}
	return n * mult, nil
}

// minMemory is the smallest memory limit accepted: below it not even a shell starts,
// which would look like a broken sandbox rather than a limit.
const minMemory = 4 << 20

// ParseMemoryLimit reads limits.memory: a size, or "max" (0: no limit).
func ParseMemoryLimit(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "max") {
		return 0, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%w: memory %v, or \"max\" for no limit", ErrBadLimit, err)
	}
	if n < minMemory {
		return 0, fmt.Errorf("%w: memory %q is below the 4MiB a process needs to start: write it like \"2GiB\", or \"max\" for no limit", ErrBadLimit, s)
	}
	return n, nil
}

// ParseCPULimit reads limits.cpu: a share of one CPU in percent ("150%"), or "max" (0: no limit).
func ParseCPULimit(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "max") {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(t, "%")), 10, 64)
	if err != nil || !strings.HasSuffix(t, "%") || n < 1 || n > 100_000 {
		return 0, fmt.Errorf("%w: cpu %q: write a share of one CPU like \"200%%\" (two CPUs' worth, 1%% to 100000%%), or \"max\" for no limit", ErrBadLimit, s)
	}
	return n, nil
}

// CheckPidsLimit checks limits.pids.
func CheckPidsLimit(n int) (int64, error) {
	if n < 8 || n > 4_194_304 {
		return 0, fmt.Errorf("%w: pids = %d: choose between 8 (a shell and a few commands) and 4194304 processes at once", ErrBadLimit, n)
	}
	return int64(n), nil
}

// Validate checks the limits a layer sets (a department's defaults, a task's overrides,
// config.toml): each refusal wraps ErrBadLimit and says how to write it.
func (l Limits) Validate() error {
	var errs []error
	if l.Memory != "" {
		if _, err := ParseMemoryLimit(l.Memory); err != nil {
			errs = append(errs, err)
		}
	}
	if l.Pids != 0 {
		if _, err := CheckPidsLimit(l.Pids); err != nil {
			errs = append(errs, err)
		}
	}
	if l.CPU != "" {
		if _, err := ParseCPULimit(l.CPU); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
