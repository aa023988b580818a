package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Airlock's other executables live beside airlock: airlock-desktop (the window), airlockd
// (the headless core) and airlock-agent (the MCP server and hook adapter). The commands
// that need them become them.

// launchDesktop replaces this process with airlock-desktop found beside it.
func launchDesktop(_ *env) error {
	return execBeside("airlock-desktop", nil, "build it with `make build`, or run the headless core with `airlock daemon`")
}

// execBeside replaces this process with the named executable found beside this one.
func execBeside(name string, args []string, hint string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find %s: %w", name, err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	target := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("%s is not installed beside %s (looked for %s): %s", name, self, target, hint)
	}
	return syscall.Exec(target, append([]string{target}, args...), os.Environ())
}
