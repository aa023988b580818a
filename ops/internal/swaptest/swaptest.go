//go:build linux

// Package swaptest is an attacker for the ops tests: a separate process that watches a
// directory with inotify and, the moment anything in it is opened or read, renames
// another file over a target there. Tests re-execute their own binary as that process
// (call [Main] first thing in TestMain).
package swaptest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

const envDir, envTarget, envEvil, envMax = "SWAPTEST_DIR", "SWAPTEST_TARGET", "SWAPTEST_EVIL", "SWAPTEST_MAX"

// Main runs the swapper when this process was started by [Start]; it returns only
// otherwise.
func Main() {
	if os.Getenv(envDir) == "" {
		return
	}
	if err := swap(os.Getenv(envDir), os.Getenv(envTarget), os.Getenv(envEvil), os.Getenv(envMax)); err != nil {
		fmt.Fprintln(os.Stderr, "swaptest:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func swap(dir, target, evil, maxS string) error {
	limit, err := strconv.Atoi(maxS)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(evil)
	if err != nil {
		return err
	}
	// The replacement is written next to the watched directory, not in it, so that
	// writing it raises no event there; rename(2) then swaps it in atomically.
	stage := filepath.Join(filepath.Dir(dir), ".swaptest-"+strconv.Itoa(os.Getpid()))
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		return err
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_OPEN|syscall.IN_ACCESS); err != nil {
		return err
	}
	fmt.Println("ready")
	buf := make([]byte, 64<<10)
	for swaps := 0; swaps < limit; {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			return err
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if swaps >= limit {
				break
			}
			if err := os.WriteFile(stage, data, 0o644); err != nil {
				return err
			}
			if err := os.Rename(stage, filepath.Join(dir, target)); err != nil {
				return err
			}
			swaps++
		}
	}
	return nil
}

// Start starts the swapper on dir: every open or read of a file in dir (up to max times)
// renames a copy of evil over dir/target. It returns once the watch is in place; the
// process is ended when the test ends, or by the returned stop.
func Start(t testing.TB, dir, target, evil string, max int) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDir+"="+dir, envTarget+"="+target, envEvil+"="+evil, envMax+"="+strconv.Itoa(max))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the swapper did not start: %q %v", line, err)
	}
	done := false
	stop = func() {
		if done {
			return
		}
		done = true
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	return stop
}

// SQLite3 runs the sqlite3 CLI (the command the swap tests' applies run) in dir and
// returns its output; a failure fails the test.
func SQLite3(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("sqlite3", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("sqlite3 %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// NeedSQLite3 skips the test where the sqlite3 CLI is not installed.
func NeedSQLite3(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		tb.Skip("sqlite3 is not installed (apt install sqlite3)")
	}
}
