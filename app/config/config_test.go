package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseReportsLineAndColumn(t *testing.T) {
	cases := []struct {
		name, src     string
		line, col     int
		wantInMessage string
	}{
		{"syntax", "sandbox_mode = \"read-only\"\napproval_policy = \n", 2, 19, ""},
		{"unknown key", "sandbox_mode = \"read-only\"\n\n[isolation]\nbakend = \"os\"\n", 4, 1, "unknown key"},
		{"bad enum", "\n\nsandbox_mode = \"workspace_write\"\n", 3, 1, "is not one of read-only"},
		{"bad nested enum", "[isolation]\n  backend = \"bwrap\"\n", 2, 3, "auto, os, app"},
		{"bad rule action", "[[permission.rules]]\ntool = \"bash\"\naction = \"allow\"\n\n[[permission.rules]]\ntool = \"bash\"\naction = \"maybe\"\n", 5, 3, "rule 2: action \"maybe\""},
		{"bad tier", "[permission.tiers]\nbash = \"P3\"\n", 2, 1, "P0 (silent)"},
		{"wrong type", "[sandbox_workspace_write]\nnetwork_access = \"yes\"\n", 2, 18, ""},
		{"tcp not loopback", "[api]\ntcp_address = \"0.0.0.0:8080\"\n", 2, 1, "loopback"},
		{"bad terminal proof", "[approvals]\nterminal_proof = \"none\"\n", 2, 1, "is not one of os, tty"},
		{"bad secret store", "[secrets]\n\nstore = \"plaintext\"\n", 3, 1, "secrets.store = \"plaintext\" is not one of keyring, file"},
		{"pam service as a path", "[approvals]\npam_service = \"../tmp/permit\"\n", 2, 1, "name a service of /etc/pam.d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.src))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want *Error", err)
			}
			p := ce.Problems[0]
			if p.Line != tc.line || p.Column != tc.col {
				t.Errorf("position = %d:%d, want %d:%d (%s)", p.Line, p.Column, tc.line, tc.col, p.Message)
			}
			if !strings.Contains(ce.Error(), tc.wantInMessage) {
				t.Errorf("message %q does not say %q", ce.Error(), tc.wantInMessage)
			}
		})
	}
}

func TestParseAcceptsTheDesignExample(t *testing.T) {
	src := readTestdata(t, "design-example.toml")
	f, err := Parse("config.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if *f.SandboxMode != "workspace-write" || f.Permission.Tiers["bash"] != "P1" || len(f.Permission.Rules) != 1 || *f.Approvals.TerminalProof != "os" || f.Hooks.BeforeToolUse[0].Command[0] != "/usr/local/bin/my-hook" {
		t.Fatalf("decoded %+v", f)
	}
}

func TestEffectivePrecedence(t *testing.T) {
	mode := "read-only"
	f := File{SandboxMode: &mode, ApprovalPolicy: &mode}
	f.ApprovalPolicy = nil
	env := map[string]string{"AIRLOCK_SANDBOX_MODE": "full-access", "AIRLOCK_APPROVAL_POLICY": "never"}
	got, err := Effective(f, "/c.toml", func(k string) string { return env[k] }, map[string]any{"approval_policy": "untrusted"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Setting{
		"sandbox_mode":    {Value: "full-access", Layer: LayerEnv, Detail: "AIRLOCK_SANDBOX_MODE"},
		"approval_policy": {Value: "untrusted", Layer: LayerFlag},
		"execution_mode":  {Value: "local", Layer: LayerDefault},
	}
	for _, s := range got {
		if w, ok := want[s.Key]; ok && (s.Value != w.Value || s.Layer != w.Layer || s.Detail != w.Detail) {
			t.Errorf("%s = %v from %s %s, want %v from %s %s", s.Key, s.Value, s.Layer, s.Detail, w.Value, w.Layer, w.Detail)
		}
	}
	env["AIRLOCK_NETWORK"] = "perhaps"
	if _, err := Effective(f, "/c.toml", func(k string) string { return env[k] }, nil); err == nil || !strings.Contains(err.Error(), "AIRLOCK_NETWORK") {
		t.Errorf("a bad environment value must be an error naming the variable, got %v", err)
	}
}

func TestStoreKeepsLastGoodAndReloadsLive(t *testing.T) {
	path, s, changes := watchedStore(t, "sandbox_mode = \"read-only\"\n")
	// Break it: the store keeps read-only and reports the line.
	if err := os.WriteFile(path, []byte("sandbox_mode = \"read-only\"\nnetwork = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, changes, func(st State) bool { return st.Error != nil })
	if *st.File.SandboxMode != "read-only" || st.Error.Problems[0].Line == 0 {
		t.Fatalf("broken file: kept %v, error %v", st.File.SandboxMode, st.Error)
	}
	if *s.State().File.SandboxMode != "read-only" {
		t.Fatal("State() lost the last good configuration")
	}
	// Fix it by renaming a new file over it, as editors do.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("sandbox_mode = \"full-access\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, changes, func(st State) bool { return st.Error == nil })
	if *st.File.SandboxMode != "full-access" {
		t.Fatalf("after the fix: %v", *st.File.SandboxMode)
	}
}

func TestOpenRefusesABrokenFileAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte("approval_policy = \"sometimes\"\n"), 0o644)
	if _, err := Open(path, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("Open = %v, want an error with the line", err)
	}
}

func TestOpenWithoutFileUsesDefaults(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "none.toml"), nil)
	if err != nil || s.State().Exists {
		t.Fatalf("Open = %v, exists %v", err, s.State().Exists)
	}
}

// watchedStore writes content to a config.toml, opens it and watches it until the test
// ends; each reload arrives on changes.
func watchedStore(t *testing.T, content string) (path string, s *Store, changes chan State) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	changes = make(chan State, 10)
	s, err := Open(path, func(st State) { changes <- st })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	return path, s, changes
}

func waitState(t *testing.T, ch <-chan State, ok func(State) bool) State {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case st := <-ch:
			if ok(st) {
				return st
			}
		case <-deadline:
			t.Fatal("no reload seen")
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "10": 10, "3 KB": 3000} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := ParseSize("lots"); err == nil {
		t.Error("ParseSize(lots) must fail")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("sandbox_mode = \"read-only\"\n[isolation]\nbackend=\"os\"\n"))
	f.Add([]byte("[[permission.rules]]\ntool=\"bash\"\naction=\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("f.toml", data)
		var ce *Error
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error of type %T", err)
		}
	})
}

// An editor that truncates config.toml and writes it a moment later (a slow, in-place
// save) must not put the defaults of an empty file in force in between.
func TestStoreWaitsOutAnInPlaceRewrite(t *testing.T) {
	path, _, changes := watchedStore(t, "sandbox_mode = \"read-only\"\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // longer than the settle time of one event
	if _, err := f.WriteString("sandbox_mode = \"workspace-write\"\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st := waitState(t, changes, func(st State) bool { return true })
	if st.File.SandboxMode == nil || *st.File.SandboxMode != "workspace-write" {
		t.Fatalf("first reload after the rewrite = %+v; want the rewritten file, never the empty one", st.File)
	}
}
