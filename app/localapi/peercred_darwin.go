package localapi

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// peerCred reads LOCAL_PEERCRED (the uid) and LOCAL_PEERPID from a unix connection: macOS
// has no SO_PEERCRED.
func peerCred(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, errors.New("not a unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Xucred
	var pid int
	var credErr, pidErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		pid, pidErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, credErr
	}
	if pidErr != nil {
		return Peer{}, pidErr
	}
	return Peer{Unix: true, PID: pid, UID: int(cred.Uid)}, nil
}
