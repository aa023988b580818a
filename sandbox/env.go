package sandbox

import (
	"slices"
	"strings"
)

// scrubbedExact are variable names always removed unless granted: credentials,
// and addresses of the things every sandbox hides.
var scrubbedExact = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "HF_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	"GOOGLE_APPLICATION_CREDENTIALS", "DOCKER_AUTH_CONFIG", "KUBE_TOKEN", "VAULT_TOKEN", "NETRC",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
}

// scrubbedPrefixes remove whole credential families.
var scrubbedPrefixes = []string{"AWS_", "AZURE_", "GCP_", "GOOGLE_CLOUD_", "AIRLOCK_API_"}

// IsCredentialEnv reports whether an environment variable name looks like a
// credential (…_TOKEN, …_SECRET…, …_KEY, …PASSWORD…, AWS_…, GITHUB_TOKEN, …)
// or points at something hidden from sandboxes (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS).
func IsCredentialEnv(name string) bool {
	u := strings.ToUpper(name)
	if slices.Contains(scrubbedExact, u) {
		return true
	}
	for _, p := range scrubbedPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	switch {
	case strings.HasSuffix(u, "_TOKEN"), strings.Contains(u, "_TOKEN_"), u == "TOKEN",
		strings.Contains(u, "SECRET"),
		strings.HasSuffix(u, "_KEY"), strings.HasSuffix(u, "_KEYS"), strings.Contains(u, "API_KEY"), strings.Contains(u, "APIKEY"),
		strings.HasSuffix(u, "_KEY_ID"),
		strings.Contains(u, "PASSWORD"), strings.Contains(u, "PASSWD"), strings.HasSuffix(u, "_PASS"), strings.HasSuffix(u, "_PAT"),
		strings.Contains(u, "CREDENTIAL"), strings.Contains(u, "PRIVATE_KEY"), strings.HasSuffix(u, "_AUTH"),
		strings.Contains(u, "SESSION_KEY"), strings.HasSuffix(u, "_COOKIE"):
		return true
	}
	return false
}

// ScrubEnv returns env without credential variables, except those named in grant
// (exact names). Entries without '=' are dropped.
func ScrubEnv(env, grant []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if IsCredentialEnv(name) && !slices.Contains(grant, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// setEnv returns a copy of env with name set to value, whatever env had for it.
func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}
