package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestExecUnderLimits: `airlock exec` runs its command under [limits] from config.toml,
// a flag lowering one of them, and a command that reaches the pids limit is ended saying
// so, with its exit status.
func TestExecUnderLimits(t *testing.T) {
	in := newInstance(t)
	ws := t.TempDir()
	if _, stderr, code := in.run("exec", "--cwd", ws, "--", "true"); code != 0 {
		t.Fatalf("exec true: %d %q", code, stderr)
	} else if strings.Contains(stderr, "limits are NOT applied") {
		t.Skipf("no cgroup to apply limits with here: %s", stderr)
	}
	conf := filepath.Join(in.home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[limits]\npids = 64\nmemory = \"512MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := in.run("check", "--json", "--cwd", ws, "--pids", "24", "--", "true")
	var rep struct {
		Policy struct {
			Limits api.Limits `json:"limits"`
		} `json:"policy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Policy.Limits != (api.Limits{Memory: "512MiB", Pids: 24, CPU: "200%"}) {
		t.Fatalf("check: %d %+v %v %q, want config.toml's memory and the flag's pids", code, rep.Policy.Limits, err, stderr)
	}
	_, stderr, code = in.run("exec", "--cwd", ws, "--pids", "24", "--", "bash", "-c", "for i in $(seq 100); do sleep 30 & done; wait")
	if code == 0 || !strings.Contains(stderr, "ended: the pids limit (24) was reached") {
		t.Fatalf("exec of 100 processes under pids = 24: exit %d, stderr %q", code, stderr)
	}
}
