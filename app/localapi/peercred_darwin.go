package localapi

import "golang.org/x/sys/unix"

// peerOf reads LOCAL_PEERCRED (the uid) and LOCAL_PEERPID: macOS has no SO_PEERCRED.
func peerOf(fd int) (Peer, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Unix: true, PID: pid, UID: int(cred.Uid)}, nil
}
