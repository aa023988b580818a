package sandbox

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// ErrNoNetworkStack is returned for a network-on run when the user-mode network stack
// that connects the run's own network namespace to the outside is missing: the run is
// refused rather than given the host's namespace.
var ErrNoNetworkStack = errors.New("network_access = true gives the run a network namespace of its own, connected out through slirp4netns, " +
	"which is not installed: install it (apt install slirp4netns), or turn the network off (network_access = false)")

// ErrNetworkNeedsNamespace is returned for a network-on run on a backend that cannot give
// it a network namespace of its own (Landlock): it would share the host's loopback services.
var ErrNetworkNeedsNamespace = errors.New("network_access = true needs a network namespace of the run's own, which only the bubblewrap backend gives " +
	"(here the host's loopback services would be reachable): install bubblewrap and slirp4netns (apt install bubblewrap slirp4netns) " +
	"and allow unprivileged user namespaces, or turn the network off (network_access = false)")

// ErrNetworkStackFailed wraps a failure of the network stack while a run's network was being set up.
var ErrNetworkStackFailed = errors.New("the network stack (slirp4netns) could not connect the sandbox's network namespace")

// Egress connects a network_access = "allowlist" run to its egress proxy. It is called
// with the host pid of the sandbox (bubblewrap's child, in the run's own network
// namespace) before the command is released, and must listen on addr (EgressAddr, a
// loopback address inside that namespace) and serve the proxy there until stop is
// called, which happens when the run ends. sandbox/egress's Hook builds one; this
// package does not link the proxy itself, so that `airlock exec` stays small.
type Egress func(ctx context.Context, pid int, addr string) (stop func(), err error)

// EgressAddr is where an allowlist run's proxy listens inside the run's namespace. The
// namespace is new and nothing runs in it before the command is released, so a fixed
// port is always free, and the proxy variables can be set before bubblewrap starts
// (bubblewrap passes its own environment on; nothing can be added to it later).
const EgressAddr = "127.0.0.1:3128"

// AskAddr is where a sandbox's ask-only channel listens inside the sandbox's own network
// namespace (fixed for the same reason as EgressAddr). Every process of the sandbox can
// reach it; nothing outside can, and nothing on it can answer, list or change anything.
const AskAddr = "127.0.0.1:3129"

// MicroVMAskAddr is where a command in the micro-VM reaches its ask-only channel: QEMU's
// user-mode network maps the guest's 10.0.2.2 to the loopback of QEMU's own network
// namespace, where the channel listens on AskAddr's port.
const MicroVMAskAddr = "10.0.2.2:3129"

// EnvAskSocket tells the processes of a sandbox where its ask-only channel listens
// (AskAddr). airlock hook and airlock mcp use it when it is set.
const EnvAskSocket = "AIRLOCK_ASK_SOCKET"

// EnvEnclosingNetwork tells the processes of a bubblewrap sandbox that they are inside
// one, and its network_access. A sandbox started inside it (an MCP server's bash call in
// a run) cannot nest bubblewrap, which refuses new user namespaces there: it nests with
// Landlock, its TCP reaching only the ports the enclosing network namespace serves.
const EnvEnclosingNetwork = "AIRLOCK_SANDBOX_NETWORK"

// ErrAskFailed wraps a failure to serve a sandbox's ask-only channel: the run is refused
// rather than started with an agent that has nobody to ask.
var ErrAskFailed = errors.New("the sandbox's ask-only channel could not be served")

// ErrEgressFailed wraps a failure to connect an allowlist run to its egress proxy: the
// run is refused rather than started without its way out.
var ErrEgressFailed = errors.New("the egress proxy could not be connected to the sandbox")

// EgressNotConnected is the warning of an allowlist run that got no proxy (no Egress
// hook in this caller, or a backend without a network namespace): it ran with the
// network off.
const EgressNotConnected = `network_access = "allowlist": the egress proxy is not connected here, so this run had no network at all ` +
	"(the proxy needs bubblewrap, and for airlock exec a running Airlock: start it with airlock daemon)"

// proxyVars are the variables ProxyEnv sets (and so removes from the caller's environment).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy", "NODE_USE_ENV_PROXY"}

// ProxyEnv returns env with the proxy variables pointing at addr: HTTP(S)_PROXY for the
// HTTP proxy, ALL_PROXY as socks5h (the proxy resolves names: the namespace has no DNS),
// and NO_PROXY empty, so that no destination is tried directly (it would get nothing);
// NODE_USE_ENV_PROXY=1 makes Node's own fetch take them too (Node 22.21 and 24.5 on).
func ProxyEnv(env []string, addr string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(proxyVars, name)
	})
	h, s := "http://"+addr, "socks5h://"+addr
	return append(out, "HTTP_PROXY="+h, "HTTPS_PROXY="+h, "http_proxy="+h, "https_proxy="+h,
		"ALL_PROXY="+s, "all_proxy="+s, "NO_PROXY=", "no_proxy=", "NODE_USE_ENV_PROXY=1")
}

// AskEnv returns env with EnvAskSocket pointing at AskAddr (whatever the caller had set).
func AskEnv(env []string) []string {
	return setEnv(env, EnvAskSocket, AskAddr)
}
