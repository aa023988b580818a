package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/api"
)

func TestJoinNetworkValue(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"exec", "--network", "allowlist", "--", "curl", "x"}, []string{"exec", "--network=allowlist", "--", "curl", "x"}},
		{[]string{"exec", "--network", "--", "allowlist"}, []string{"exec", "--network", "--", "allowlist"}},
		{[]string{"exec", "--", "sh", "--network", "allowlist"}, []string{"exec", "--", "sh", "--network", "allowlist"}},
		{[]string{"check", "--network", "true"}, []string{"check", "--network", "true"}}, // true(1), with the network on
		{[]string{"dept", "set", "ops", "--network", "allowlist"}, []string{"dept", "set", "ops", "--network=allowlist"}},
		{[]string{"mcp", "--network=off"}, []string{"mcp", "--network=off"}},
	} {
		if got := joinNetworkValue(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("joinNetworkValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestNetworkFlagValues: --network bare is on; its value is one of the three (or a
// boolean's spelling); anything else is refused naming the choices. The department and
// task commands' flag gives their defaults the same values.
func TestNetworkFlagValues(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want api.NetworkAccess
		err  bool
	}{
		{[]string{"--network"}, api.NetworkOn, false},
		{[]string{"--network=allowlist"}, api.NetworkAllowlist, false},
		{[]string{"--network=off"}, api.NetworkOff, false},
		{[]string{"--network=false"}, api.NetworkOff, false},
		{[]string{"--network=sometimes"}, "", true},
	} {
		var f networkFlag
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		registerNetwork(fs, &f)
		err := fs.Parse(tt.args)
		if (err != nil) != tt.err || (!tt.err && f.v != tt.want) {
			t.Errorf("%v: %q %v", tt.args, f.v, err)
		}
		if tt.err && (err == nil || !strings.Contains(err.Error(), "allowlist")) {
			t.Errorf("%v: %v does not name the choices", tt.args, err)
		}
	}
	var d defaultsFlags
	cmd := &cobra.Command{Use: "x"}
	d.register(cmd)
	if err := cmd.ParseFlags([]string{"--network=allowlist", "--sandbox", "read-only"}); err != nil {
		t.Fatal(err)
	}
	if v := d.value(cmd); v.Network == nil || *v.Network != api.NetworkAllowlist || v.SandboxMode != "read-only" {
		t.Errorf("defaults %+v", v)
	}
	var unset defaultsFlags
	cmd = &cobra.Command{Use: "x"}
	unset.register(cmd)
	_ = cmd.ParseFlags(nil)
	if v := unset.value(cmd); v.Network != nil {
		t.Errorf("no --network: %+v", v)
	}
}
