package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHiddenFileHardLinkRefused: a hard link left in the workspace to a hidden file (a
// credential, a hidden single file, Airlock's secrets file store in its state directory)
// is another name the mounts do not hide: the sandbox refuses to start, naming the file
// and the fix, and nothing of it is printed. Once the link is gone the command runs.
// Before, `cat hard` printed each secret.
func TestHiddenFileHardLinkRefused(t *testing.T) { backends(t, hiddenFileHardLinkRefused) }

func hiddenFileHardLinkRefused(t *testing.T, backend string) {
	f := newFixture(t, "workspace-write", false)
	state := filepath.Join(f.base, "data")
	secrets := map[string]string{
		filepath.Join(f.home, ".ssh", "id_ed25519"):                              "SECRET-ssh-key",
		filepath.Join(f.home, ".netrc"):                                          "machine x password SECRET-netrc",
		filepath.Join(state, "secrets", "secrets.json"):                          `{"api-token":"SECRET-api-token"}`,
		filepath.Join(state, "airlock.db"):                                       "SECRET-database",
		filepath.Join(f.home, ".mozilla", "firefox", "p.default", "logins.json"): "SECRET-browser",
	}
	for p, body := range secrets {
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(body), 0o600))
	}
	mode := "workspace-write"
	pol, err := Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(map[string]string{"XDG_RUNTIME_DIR": f.xdg}),
		Flags: Layer{Mode: &mode, Network: netp(false)}, State: []string{state}})
	must(t, err)
	f.policy = pol
	run := func() (string, error) {
		var out bytes.Buffer
		_, err := Exec(context.Background(), ExecRequest{Policy: pol, Argv: []string{"/bin/sh", "-c", "cat hard; echo ran"}, Env: []string{"PATH=/usr/bin:/bin"},
			Stdout: &out, Stderr: &out, Timeout: 30 * time.Second})
		return out.String(), err
	}
	for p, body := range secrets {
		hard := filepath.Join(f.ws, "hard")
		must(t, os.Link(p, hard))
		out, err := run()
		var le *HiddenLinkError
		if strings.Contains(out, body) || !errors.As(err, &le) || le.Path != p || !strings.Contains(err.Error(), "find / -xdev -samefile "+p) {
			t.Errorf("ESCAPE? a hard link to %s in the workspace: err %v, output:\n%s", p, err, out)
		}
		must(t, os.Remove(hard))
		if out, err := run(); err != nil || !strings.Contains(out, "ran") {
			t.Errorf("with the link gone the command should run: %v %s", err, out)
		}
	}
}
