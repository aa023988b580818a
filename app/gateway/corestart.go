package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/paths"
)

// EnsureCore makes sure an Airlock core answers on the socket. If none does, it starts
// one beside this executable — the desktop app, hidden in the tray, when a display is
// available and it is installed; else the headless airlockd, detached, logging to a file
// — waits until it answers, and says so on stderr.
func EnsureCore(ctx context.Context, p paths.Paths, getenv func(string) string, stderr io.Writer) error {
	c := localapi.NewClient(p.Socket)
	_, err := localapi.Call(ctx, c, api.GetStatus, api.None{})
	var nr *localapi.NotRunningError
	if err == nil || !errors.As(err, &nr) {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("no Airlock core runs, and this executable cannot be found to start one: %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	dir := filepath.Dir(self)
	desktop := filepath.Join(dir, "airlock-desktop")
	daemon := filepath.Join(dir, "airlockd")
	hasDisplay := getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
	target, what := daemon, "the headless core (airlockd)"
	if hasDisplay && isExecutable(desktop) {
		target, what = desktop, "the Airlock app, hidden in the tray"
	}
	if !isExecutable(target) {
		return fmt.Errorf("no Airlock core runs and %s is not installed beside %s: start the Airlock app or `airlock daemon`", filepath.Base(target), self)
	}
	logDir := filepath.Dir(p.RunLogs)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", logDir, err)
	}
	logPath := filepath.Join(logDir, filepath.Base(target)+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open the core's log %s: %w", logPath, err)
	}
	defer logFile.Close()
	cmd := exec.Command(target)
	cmd.Env = append(os.Environ(), "AIRLOCK_START_HIDDEN=1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", target, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release() // detached: it outlives this server
	fmt.Fprintf(stderr, "airlock mcp: no Airlock core was running; started %s (pid %d, log %s)\n", what, pid, logPath)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := localapi.Call(ctx, c, api.GetStatus, api.None{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("started %s (pid %d) but it did not answer on %s within 20s; see %s: %w", what, pid, p.Socket, logPath, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
