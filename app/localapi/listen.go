// Package localapi is Airlock's local API: HTTP + JSON over a unix socket private to
// the user (0600 in a 0700 directory, the peer's uid checked with SO_PEERCRED), live
// events as server-sent events, an optional loopback TCP listener guarded by a bearer
// token and an Origin check (LoopbackGuard, which `airlock mcp --http` shares), and the
// Go client the CLI uses.
package localapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// AlreadyRunningError says another Airlock instance holds the socket.
type AlreadyRunningError struct {
	Socket string
	PID    int // the holder's pid when known
}

func (e *AlreadyRunningError) Error() string {
	who := "another Airlock app or daemon"
	if e.PID > 0 {
		who = fmt.Sprintf("another Airlock app or daemon (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s is already running on %s: use it (airlock status), or stop it first", who, e.Socket)
}

// Lock is the single-instance lock held for the life of a server. The kernel drops it
// when the process dies, even by kill -9, so a stale socket is recognised safely.
type Lock struct {
	file *os.File
	path string
}

// lockSettle is how long Acquire waits for a lock held by another instance before saying
// so (see Acquire).
const lockSettle = 500 * time.Millisecond

// Acquire takes the instance lock beside socketPath, checking that the directory is
// the user's own and private.
func Acquire(socketPath string) (*Lock, error) {
	dir := filepath.Dir(socketPath)
	if err := checkPrivateDir(dir); err != nil {
		return nil, err
	}
	lockPath := socketPath + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open instance lock %s: %w", lockPath, err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	// A lock just released can stay held for a moment: a process forking elsewhere in
	// the releasing program holds a copy of its descriptor until it execs (close-on-exec
	// closes it only then). A running instance holds it for good; so wait briefly.
	for deadline := time.Now().Add(lockSettle); errors.Is(err, unix.EWOULDBLOCK) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		pid := readPID(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &AlreadyRunningError{Socket: socketPath, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{file: f, path: lockPath}, nil
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	return pid
}

// Release drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}

// checkPrivateDir refuses a socket directory that another user owns or others can
// enter: the socket's privacy rests on it.
func checkPrivateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("socket directory %s is not a directory (a symlink?): remove it and start again", dir)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d): another user's Airlock cannot be used; unset AIRLOCK_HOME/XDG_RUNTIME_DIR or pick your own", dir, st.Uid, os.Getuid())
	}
	if st.Mode&0o077 != 0 {
		return fmt.Errorf("socket directory %s has mode %o: it must be private (chmod 700 %s)", dir, st.Mode&0o777, dir)
	}
	return nil
}

// listenUnix binds the socket under a held Lock, replacing a stale socket file left by
// a dead process, and makes it 0600.
func listenUnix(socketPath string) (*net.UnixListener, error) {
	var st unix.Stat_t
	if err := unix.Lstat(socketPath, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return nil, fmt.Errorf("%s exists and is not a socket: move it away and start again", socketPath)
		}
		if int(st.Uid) != os.Getuid() {
			return nil, fmt.Errorf("socket %s belongs to uid %d, not to you: remove it as that user or pick another AIRLOCK_HOME", socketPath, st.Uid)
		}
		// We hold the instance lock, so whoever bound it is gone: it is stale.
		if err := os.Remove(socketPath); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", socketPath, err)
		}
	}
	old := syscall.Umask(0o177)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", socketPath, err)
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(socketPath, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod %s: %w", socketPath, err)
	}
	return l, nil
}

// Peer is who is on the other end of a request.
type Peer struct {
	Unix bool // over the unix socket (false: loopback TCP)
	PID  int  // the host pid, from SO_PEERCRED (0 over TCP)
	UID  int
}

type peerKey struct{}

// PeerFrom returns the peer of a request.
func PeerFrom(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}
