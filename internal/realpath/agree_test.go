package realpath_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/internal/realpath"
	"github.com/airlock-app/airlock/sandbox"
)

// TestGateAndSandboxAgree: for a path behind many symbolic links, the departments side
// (is this place known? it resolves with departments.Resolve) and the sandbox (may a run
// start there, may it write there?) come to the same answer. They used to walk with two
// copies that stopped at different depths (255 and 40 links), so a place 41 links deep
// was known to the gate while the sandbox could not resolve it; both walk with this
// package now.
func TestGateAndSandboxAgree(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) string {
		t.Helper()
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chain := func(dir string, n int) string { // dir/ln -> … -> dir/l1 -> ws: n links
		target := "../ws"
		for i := 1; i <= n; i++ {
			link(target, filepath.Join(dir, "l"+strconv.Itoa(i)))
			target = "l" + strconv.Itoa(i)
		}
		return filepath.Join(base, dir, target)
	}
	self := link(".", "ws/self")
	link("loop-b", "loop-a")
	link("loop-a", "loop-b")
	escape := link(outside, "ws/escape")

	mode, network := "workspace-write", sandbox.NetworkOff
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: ws, Home: filepath.Join(base, "home"),
		Env: func(string) string { return "" }, Flags: sandbox.Layer{Mode: &mode, Network: &network}})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		place string
		known bool // the gate resolves it, into the workspace
	}{
		{"a chain of 40 links", chain("c40", realpath.MaxLinks), true},
		{"a chain of 41 links", chain("c41", realpath.MaxLinks+1), false},
		{"40 links along the path", self + strings.Repeat("/self", realpath.MaxLinks-1), true},
		{"41 links along the path", self + strings.Repeat("/self", realpath.MaxLinks), false},
		{"a loop", filepath.Join(base, "loop-a"), false},
		{"a link out of the workspace", escape, false},
		{"a link, then ..", escape + "/../ws", true}, // .. from where the link leads: base/ws
		{"a missing rest", ws + "/new/a/../b", true},
		{"a dangling link", link("missing/x", "ws/dangling"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, exists, gateErr := departments.Resolve(tc.place)
			want, wantExists, wantErr := realpath.Resolve(tc.place, realpath.Options{})
			if res != want || exists != wantExists || (gateErr == nil) != (wantErr == nil) {
				t.Fatalf("departments.Resolve(%s) = %q, %v, %v; realpath.Resolve = %q, %v, %v", tc.place, res, exists, gateErr, want, wantExists, wantErr)
			}
			known := gateErr == nil && departments.Within(res, ws)
			if known != tc.known {
				t.Fatalf("gate: Resolve(%s) = %q, %v; want known %v", tc.place, res, gateErr, tc.known)
			}
			// The sandbox lets a run write there exactly when the gate knows the place as the workspace.
			werr := pol.CheckWrite(filepath.Join(tc.place, "report.txt"))
			if (werr == nil) != known {
				t.Errorf("sandbox: CheckWrite in %s = %v, but the gate says known = %v (%q, %v)", tc.place, werr, known, res, gateErr)
			}
			if !exists {
				return // no run starts in a missing directory
			}
			// A run may start there exactly when the gate can resolve the place, and then in the same directory.
			run, cwdErr := sandbox.Resolve(sandbox.Inputs{Cwd: tc.place, Home: filepath.Join(base, "home"),
				Env: func(string) string { return "" }, Flags: sandbox.Layer{Mode: &mode, Network: &network}})
			if (cwdErr == nil) != (gateErr == nil) || cwdErr == nil && run.Cwd != res {
				t.Errorf("sandbox: working directory %s = %q, %v; gate: %q, %v", tc.place, run.Cwd, cwdErr, res, gateErr)
			}
		})
	}
}
