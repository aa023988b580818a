//go:build !linux

package egress

import (
	"errors"
	"net"
)

// ListenInNetns is Linux only: other systems have no network namespaces.
func ListenInNetns(pid int, addr string) (net.Listener, error) {
	return nil, errors.New("egress: listening in a network namespace needs Linux")
}
