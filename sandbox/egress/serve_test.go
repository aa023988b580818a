package egress

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestServeRefusesBadInput: a bad list entry, a non-loopback address and a pid that is
// not there each fail Serve with an error that names them, and nothing is left serving.
func TestServeRefusesBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, addr, want string
		pid              int
		cfg              Config
	}{
		{"bad rule", "127.0.0.1:3128", "egress proxy", os.Getpid(), Config{Allowed: []string{"exa mple.com"}}},
		{"not loopback", "0.0.0.0:3128", "not a loopback address", os.Getpid(), Config{}},
		{"no such process", "127.0.0.1:3128", "network namespace of process", 1 << 30, Config{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stop, err := Serve(context.Background(), tt.pid, tt.addr, tt.cfg)
			if err == nil {
				stop()
				t.Fatal("Serve accepted it")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}
