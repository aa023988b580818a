package api

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
