package cli

import (
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/api"
)

// limitsFlags are --memory, --pids and --cpu: the [limits] of a command (exec), or a
// department's or task's own.
type limitsFlags struct {
	memory, cpu string
	pids        int
}

func (f *limitsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.memory, "memory", "", `memory limit ([limits] memory): a size like "2GiB", or "max" for none`)
	fs.IntVar(&f.pids, "pids", 0, "process limit ([limits] pids): processes and threads at once")
	fs.StringVar(&f.cpu, "cpu", "", `CPU limit ([limits] cpu): a share of one CPU like "200%", or "max" for none`)
}

// value is the limits the flags given set (a zero field: not given).
func (f *limitsFlags) value(fs *pflag.FlagSet) api.Limits {
	var l api.Limits
	if fs.Changed("memory") {
		l.Memory = f.memory
	}
	if fs.Changed("pids") {
		l.Pids = f.pids
	}
	if fs.Changed("cpu") {
		l.CPU = f.cpu
	}
	return l
}
