package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// OwnNetns gives a program Airlock starts outside a sandbox — QEMU, which runs the
// micro-VM — a network namespace of its own with a sandbox's network, built exactly as a
// bubblewrap sandbox's is: bubblewrap starts the program there with the same filesystem
// (nothing else is unshared), and holds it back until the namespace is ready. With the
// network on, slirp4netns connects the namespace (the host's loopback out of reach, DNS
// through its forwarder); under an allowlist only the egress proxy listens there (on
// EgressAddr); with the network off nothing does; and ask, when given, serves the
// ask-only channel on AskAddr. Nothing else can be reached from inside.
type OwnNetns struct {
	n *netSetup
}

// ErrOwnNetnsNeedsBwrap is returned by NewOwnNetns when bubblewrap is not installed.
var ErrOwnNetnsNeedsBwrap = errors.New("a network namespace of its own is made with bubblewrap, which is not installed (apt install bubblewrap)")

// NewOwnNetns prepares the namespace for network (egress is used under an allowlist,
// where nil leaves the namespace with no way out). Close releases it.
func NewOwnNetns(network NetworkMode, egress, ask Egress) (*OwnNetns, error) {
	if bwrapPath() == "" {
		return nil, &ExecError{Code: ExitSandboxFailed, Err: ErrOwnNetnsNeedsBwrap}
	}
	if network != NetworkAllowlist {
		egress = nil
	}
	n, err := newNetSetup(egress, ask, network.On())
	if err != nil {
		return nil, err
	}
	return &OwnNetns{n: n}, nil
}

// Command is name with args started by bubblewrap in the namespace. The user namespace
// it makes (with --disable-userns) is how Connect sees that bubblewrap has set the
// namespace up; the uid stays the caller's.
func (o *OwnNetns) Command(name string, args ...string) *exec.Cmd {
	bw := []string{"--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--die-with-parent"}
	bw = append(bw, o.n.bwrapArgs(3)...)
	bw = append(append(append(bw, "--"), name), args...)
	cmd := exec.Command(bwrapPath(), bw...)
	cmd.Args[0] = "bwrap"
	cmd.ExtraFiles = o.n.childFiles()
	return cmd
}

// Started closes the child's ends of the pipes: call it once the command started.
func (o *OwnNetns) Started() { o.n.afterStart() }

// Connect waits until bubblewrap has made the namespace, connects it (stack, proxy,
// ask-only channel) and lets the program run. An error names what failed; the caller
// kills the command. The proxy and the channel live until Close, not until ctx ends.
func (o *OwnNetns) Connect(ctx context.Context) error {
	up, err := o.n.connect(ctx)
	if err == nil && !up {
		return &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("exec: bubblewrap ended before it made the network namespace (see its message)")}
	}
	return err
}

// Close stops the stack, the proxy and the ask-only channel and closes the pipes.
func (o *OwnNetns) Close() { o.n.close() }
