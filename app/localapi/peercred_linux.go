package localapi

import "golang.org/x/sys/unix"

// peerOf reads SO_PEERCRED.
func peerOf(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Unix: true, PID: int(cred.Pid), UID: int(cred.Uid)}, nil
}
