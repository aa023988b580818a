package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// DefaultHiddenPaths lists what every sandbox but full-access hides, from the
// environment: Airlock's socket directory ($XDG_RUNTIME_DIR/airlock, and
// $AIRLOCK_HOME/run when AIRLOCK_HOME is set), the session bus socket
// ($XDG_RUNTIME_DIR/bus and the path in DBUS_SESSION_BUS_ADDRESS), the keyring
// directory ($XDG_RUNTIME_DIR/keyring), gpg-agent's directory, the SSH agent
// socket, and the container engines' sockets (reaching Docker's is root on the host).
func DefaultHiddenPaths(env func(string) string) []string {
	out := slices.Clone(containerSockets)
	if rt := env("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		for _, n := range []string{"airlock", "bus", "keyring", "gnupg", "gcr", "ssh-agent.socket", "openssh_agent", "docker.sock", "podman"} {
			out = append(out, filepath.Join(rt, n))
		}
	}
	if h := env("AIRLOCK_HOME"); filepath.IsAbs(h) {
		out = append(out, filepath.Join(h, "run"))
	}
	if p := busSocketPath(env("DBUS_SESSION_BUS_ADDRESS")); p != "" {
		out = append(out, p)
	}
	if s := env("SSH_AUTH_SOCK"); filepath.IsAbs(s) {
		out = append(out, filepath.Clean(s))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// credentialPaths are where people keep the keys and tokens that open other machines and
// accounts, relative to the home directory. Every sandbox but full-access hides them: an
// agent's command has no business reading an SSH private key or a cloud token, and what it
// reads can leave with its output even when the network is off.
var credentialPaths = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
	".netrc", ".git-credentials", ".config/gh", ".password-store", ".local/share/keyrings",
	".pki", ".mozilla", ".config/google-chrome", ".config/chromium", ".npmrc", ".pypirc",
	".vault-token", ".terraform.d/credentials.tfrc.json", ".cargo/credentials.toml",
	".config/op", ".gem/credentials",
}

// CredentialPaths lists the credential files and directories under home that every
// sandbox but full-access hides (SSH and GPG keys, cloud and registry tokens, password
// stores, browser profiles). Paths that do not exist are listed too: the sandbox skips
// them, and the application layer still refuses a read there.
func CredentialPaths(home string) []string {
	if !filepath.IsAbs(home) {
		return nil
	}
	out := make([]string, 0, len(credentialPaths))
	for _, rel := range credentialPaths {
		out = append(out, filepath.Join(home, rel))
	}
	return out
}

// hiddenWhy says why a hidden path is hidden, for the denial a read there gets.
func hiddenWhy(h, home string) string {
	if slices.Contains(CredentialPaths(home), h) {
		return h + " holds credentials (keys, tokens, passwords) and is hidden from sandboxed runs"
	}
	return h + " is hidden from sandboxed runs (Airlock's socket, the session bus, the keyring and the SSH agent are)"
}

// containerSockets are the system-wide container engine sockets.
var containerSockets = []string{"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock"}

// busSocketPath extracts the unix socket path of a D-Bus address ("" for
// abstract sockets, which only a network namespace hides).
func busSocketPath(addr string) string {
	for _, a := range strings.Split(addr, ";") {
		rest, ok := strings.CutPrefix(a, "unix:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "path="); ok && filepath.IsAbs(v) {
				return filepath.Clean(v)
			}
		}
	}
	return ""
}
