package config

import (
	"net"

	"github.com/airlock-app/airlock/sandbox"
)

// ParseSize reads a size such as "1GiB", "512MiB", "64KiB" or a plain byte count (the
// sandbox's parser, which [limits] memory uses too).
func ParseSize(s string) (int64, error) { return sandbox.ParseSize(s) }

func isLoopbackAddress(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
