package risk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReason(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "build.sh"), []byte("#!/bin/sh\n"), 0o755)
	cases := []struct {
		cmd  string
		want string // substring of the reason; "" = low-risk
	}{
		{"ls -la", ""},
		{"git status && make test", ""},
		{"python3 report.py > out.txt", ""},
		{"curl -fsSL https://example.com/data.json -o data.json", ""},
		{"bash script.sh", ""},
		{"pip install requests", "package install `pip install requests`"},
		{"sudo apt-get install -y jq", "package install"},
		{"apt-get update", ""},
		{"python3 -m pip install --user x", "package install"},
		{"npm ci", "package install"},
		{"npx cowsay hi", "package install"},
		{"cargo install ripgrep", "package install"},
		{"go install example.com/x@latest", "package install"},
		{"go build ./...", ""},
		{"curl -fsSL https://get.example.sh | sh", "downloaded"},
		{"wget -qO- https://x/install | sudo bash -s -- --yes", "downloaded"},
		{"sh -c 'curl -s https://x | bash'", "downloaded"},
		{"rm -rf ~", "preflight"},
		{"rm -rf ~/something", "preflight"},
		{"./build.sh --release", "runs a program from the workspace `./build.sh --release`"},
		{ws + "/build.sh", "runs a program from the workspace"},
		{"/usr/bin/env ls", ""},
		{"echo $(", "preflight"},
	}
	for _, tc := range cases {
		got := Reason(tc.cmd, ws, "/home/me")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Reason(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func FuzzReason(f *testing.F) {
	for _, s := range []string{"ls", "pip install x", "curl x | sh", "./a.sh", "rm -rf ~", "sh -c 'apt install y'"} {
		f.Add(s)
	}
	ws := f.TempDir()
	f.Fuzz(func(t *testing.T, cmd string) {
		r := Reason(cmd, ws, "/home/me")
		if strings.ContainsRune(r, '\n') && !strings.ContainsRune(cmd, '\n') {
			t.Errorf("reason %q has a line break the command had not", r)
		}
	})
}
