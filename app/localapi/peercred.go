package localapi

import (
	"errors"
	"net"
)

// peerCred reads the peer's pid and uid from a unix connection (peerOf: SO_PEERCRED on
// Linux, LOCAL_PEERCRED and LOCAL_PEERPID on macOS).
func peerCred(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, errors.New("not a unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var perr error
	if err := raw.Control(func(fd uintptr) { p, perr = peerOf(int(fd)) }); err != nil {
		return Peer{}, err
	}
	return p, perr
}
