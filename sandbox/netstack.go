package sandbox

import "errors"

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
