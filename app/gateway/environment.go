package gateway

import (
	"fmt"
	"os"

	"github.com/airlock-app/airlock/app/paths"
)

// AgentEnv fills in what agents commonly strip from the environment of the MCP servers
// and hooks they start: Codex, for one, forwards only a short list of variables, without
// XDG_RUNTIME_DIR, and then the socket would be looked for in the wrong place. When
// XDG_RUNTIME_DIR is unset, no socket answers where the paths then point, and the user's
// /run/user/UID holds Airlock's socket, that directory is used.
func AgentEnv(getenv func(string) string) func(string) string {
	if getenv("AIRLOCK_HOME") != "" || getenv("XDG_RUNTIME_DIR") != "" {
		return getenv
	}
	if p, err := paths.Resolve(getenv); err != nil || exists(p.Socket) {
		return getenv
	}
	dir := fmt.Sprintf("/run/user/%d", os.Getuid())
	withDir := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return dir
		}
		return getenv(k)
	}
	if p, err := paths.Resolve(withDir); err == nil && exists(p.Socket) {
		return withDir
	}
	return getenv
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
