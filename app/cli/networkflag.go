package cli

import (
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// networkFlag is --network: bare it turns the network on, as the boolean flag it
// replaces did; --network=allowlist (or off, on, true, false) and --network allowlist
// choose the value.
type networkFlag struct{ v sandbox.NetworkMode }

func (f *networkFlag) String() string { return string(f.v) }

// Set parses the value with the sandbox's own parser.
func (f *networkFlag) Set(s string) error {
	n, err := sandbox.ParseNetwork(s)
	if err != nil {
		return err
	}
	f.v = n
	return nil
}

func (f *networkFlag) Type() string { return "off|allowlist|on" }

// registerNetwork adds --network to fs.
func registerNetwork(fs *pflag.FlagSet, f *networkFlag) {
	fs.Var(f, "network", "network access: bare = on; --network=allowlist (only [network]'s domains; no network until the egress proxy is connected) or --network=off")
	fs.Lookup("network").NoOptDefVal = string(api.NetworkOn)
}

// joinNetworkValue rewrites "--network allowlist" as "--network=allowlist". A flag
// whose value is optional (pflag's NoOptDefVal) takes one only after "=", so without
// this "allowlist" would become the command's first argument. Only the word allowlist
// is joined — "--network true" keeps running true(1) with the network on, as it always
// did — and nothing after "--" is touched.
func joinNetworkValue(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if args[i] == "--network" && i+1 < len(args) && args[i+1] == string(api.NetworkAllowlist) {
			out = append(out, "--network="+args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
