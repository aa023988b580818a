package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// personal is a person's own config.toml, comments and all.
var personal = mustReadTestdata("personal.toml")

func TestApplyEdits(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		edits []Edit
		want  string // exact result
		err   string // substring of the error, when the edit must be refused
	}{
		{
			name:  "replace a value, keeping its trailing comment",
			in:    personal,
			edits: []Edit{Set(true, "sandbox_workspace_write", "network_access")},
			want:  strings.Replace(personal, "network_access = false # off", "network_access = true # off", 1),
		},
		{
			name:  "replace a top-level string",
			in:    personal,
			edits: []Edit{Set("read-only", "sandbox_mode")},
			want:  strings.Replace(personal, `sandbox_mode = "workspace-write"   # the safe default`, `sandbox_mode = "read-only"   # the safe default`, 1),
		},
		{
			name:  "replace a multi-line array with its comments",
			in:    personal,
			edits: []Edit{Set([]string{"/srv/a", "~/b"}, "sandbox_workspace_write", "writable_roots")},
			want: strings.Replace(personal, "writable_roots = [\n  \"~/Airlock/shared\", # shared notes\n]\n",
				"writable_roots = [\"/srv/a\", \"~/b\"]\n", 1),
		},
		{
			name:  "add a key to an existing table, after its last key",
			in:    personal,
			edits: []Edit{Set([]string{".env"}, "isolation", "protected")},
			want:  strings.Replace(personal, "backend = \"auto\"\n", "backend = \"auto\"\nprotected = [\".env\"]\n", 1),
		},
		{
			name:  "add a top-level key after the last top-level key",
			in:    personal,
			edits: []Edit{Set("sandbox", "execution_mode")},
			want:  strings.Replace(personal, "approval_policy = \"on-request\"\n", "approval_policy = \"on-request\"\nexecution_mode = \"sandbox\"\n", 1),
		},
		{
			name:  "add a top-level key to a file of tables only, above the first table's comments",
			in:    "# header comment\n\n# about isolation\n[isolation]\nbackend = \"os\"\n",
			edits: []Edit{Set("never", "approval_policy")},
			want:  "# header comment\n\napproval_policy = \"never\"\n# about isolation\n[isolation]\nbackend = \"os\"\n",
		},
		{
			name:  "create a missing table at the end",
			in:    "sandbox_mode = \"read-only\" # mine\n",
			edits: []Edit{Set(true, "ops", "strict")},
			want:  "sandbox_mode = \"read-only\" # mine\n\n[ops]\nstrict = true\n",
		},
		{
			name:  "create the file's first key",
			in:    "",
			edits: []Edit{Set(true, "sandbox_workspace_write", "network_access")},
			want:  "[sandbox_workspace_write]\nnetwork_access = true\n",
		},
		{
			name:  "a file without a final newline",
			in:    "sandbox_mode = \"read-only\"",
			edits: []Edit{Set("never", "approval_policy")},
			want:  "sandbox_mode = \"read-only\"\napproval_policy = \"never\"\n",
		},
		{
			name:  "a tier for a tool whose name needs quoting",
			in:    personal,
			edits: []Edit{Set("P2", "permission", "tiers", "mcp.fetch")},
			want:  strings.Replace(personal, "bash = \"P1\"\n", "bash = \"P1\"\n\"mcp.fetch\" = \"P2\"\n", 1),
		},
		{
			name:  "quoting and escaping",
			in:    "",
			edits: []Edit{Set([]string{`C:\dir "quoted"`, "tab\there", "new\nline", "\x01"}, "isolation", "protected")},
			want:  "[isolation]\nprotected = [\"C:\\\\dir \\\"quoted\\\"\", \"tab\\there\", \"new\\nline\", \"\\u0001\"]\n",
		},
		{
			name:  "CRLF files stay CRLF",
			in:    "# mine\r\n[isolation]\r\nbackend = \"auto\"\r\n",
			edits: []Edit{Set("os", "isolation", "backend"), Set([]string{"x"}, "isolation", "protected"), Set(true, "ops", "strict")},
			want:  "# mine\r\n[isolation]\r\nbackend = \"os\"\r\nprotected = [\"x\"]\r\n\r\n[ops]\r\nstrict = true\r\n",
		},
		{
			name:  "a dotted key at the top level is replaced where it is",
			in:    "isolation.backend = \"os\" # dotted\n",
			edits: []Edit{Set("app", "isolation", "backend")},
			want:  "isolation.backend = \"app\" # dotted\n",
		},
		{
			name:  "a sibling of a dotted key is added as a dotted key (a [table] would be invalid)",
			in:    "isolation.backend = \"os\"\n[ops]\nstrict = true\n",
			edits: []Edit{Set([]string{"secrets"}, "isolation", "protected")},
			want:  "isolation.backend = \"os\"\nisolation.protected = [\"secrets\"]\n[ops]\nstrict = true\n",
		},
		{
			name:  "a key inside an inline table is refused with the way out",
			in:    "sandbox_workspace_write = { network_access = false }\n",
			edits: []Edit{Set(true, "sandbox_workspace_write", "network_access")},
			err:   "inline table",
		},
		{
			name:  "setting the value already there keeps its spelling",
			in:    "approval_policy = 'never' # literal\n[isolation]\nprotected = [ 'a',\n 'b' ]\n",
			edits: []Edit{Set("never", "approval_policy"), Set([]string{"a", "b"}, "isolation", "protected")},
			want:  "approval_policy = 'never' # literal\n[isolation]\nprotected = [ 'a',\n 'b' ]\n",
		},
		{
			name:  "a key under a plain value is refused",
			in:    "ops = 1\n",
			edits: []Edit{Set(true, "ops", "strict")},
			err:   "not a table",
		},
		{
			name:  "setting a table as a value is refused",
			in:    personal,
			edits: []Edit{Set("x", "isolation")},
			err:   "is a table",
		},
		{
			name:  "unset removes the key's line and its comment",
			in:    personal,
			edits: []Edit{Unset("sandbox_workspace_write", "writable_roots")},
			want:  strings.Replace(personal, "writable_roots = [\n  \"~/Airlock/shared\", # shared notes\n]\n", "", 1),
		},
		{
			name:  "unset of an absent key changes nothing",
			in:    personal,
			edits: []Edit{Unset("ops", "strict")},
			want:  personal,
		},
		{
			name:  "append a rule after the last one",
			in:    personal,
			edits: []Edit{AppendTable([]Field{{"tool", "bash"}, {"pattern", "ls *"}, {"action", "allow"}}, "permission", "rules")},
			want:  personal + "\n[[permission.rules]]\ntool = \"bash\"\npattern = \"ls *\"\naction = \"allow\"\n",
		},
		{
			name:  "append the first rule",
			in:    "# nothing yet\n",
			edits: []Edit{AppendTable([]Field{{"tool", "bash"}, {"pattern", "ls *"}, {"action", "allow"}}, "permission", "rules")},
			want:  "# nothing yet\n\n[[permission.rules]]\ntool = \"bash\"\npattern = \"ls *\"\naction = \"allow\"\n",
		},
		{
			name:  "remove the first rule, keeping the second",
			in:    personal,
			edits: []Edit{RemoveTable(0, "permission", "rules")},
			want:  strings.Replace(personal, "\n[[permission.rules]]\ntool = \"bash\"\npattern = \"git status *\"\naction = \"allow\"\n", "", 1),
		},
		{
			name:  "remove a rule that is not there",
			in:    personal,
			edits: []Edit{RemoveTable(5, "permission", "rules")},
			err:   "has 2 such entries",
		},
		{
			name:  "a key of an array of tables cannot be set directly",
			in:    personal,
			edits: []Edit{Set("ask", "permission", "rules", "action")},
			err:   "array of tables",
		},
		{
			name:  "a document that does not parse is not edited",
			in:    "sandbox_mode = \n",
			edits: []Edit{Set("read-only", "sandbox_mode")},
			err:   "line 1",
		},
		{
			name:  "an unsupported value",
			in:    "",
			edits: []Edit{Set(map[string]string{}, "x")},
			err:   "cannot be written",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyEdits([]byte(tt.in), tt.edits...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyEdits: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if _, err := Parse("config.toml", got); err != nil {
				t.Fatalf("the edited file does not load: %v\n%s", err, got)
			}
		})
	}
}

// The values read back are the values written, whatever they contain.
func TestEditRoundTrip(t *testing.T) {
	roots := []string{`a"b`, `c\d`, "é ü", "#not a comment", "x = 1", "]", "'"}
	out, err := ApplyEdits([]byte(personal), Set(roots, "sandbox_workspace_write", "writable_roots"), Set(true, "ops", "strict"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("config.toml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Join(f.SandboxWorkspaceWrite.WritableRoots, "|") != strings.Join(roots, "|") {
		t.Fatalf("roots read back = %q; want %q", f.SandboxWorkspaceWrite.WritableRoots, roots)
	}
	if f.Ops.Strict == nil || !*f.Ops.Strict || len(f.Permission.Rules) != 2 || f.Permission.Tiers["bash"] != "P1" {
		t.Fatalf("the rest of the file changed meaning: %+v", f)
	}
	for _, c := range []string{"# My Airlock settings — keep this comment", "# the safe default", "# network for the package mirror", "# backend stays auto"} {
		if !strings.Contains(string(out), c) {
			t.Errorf("comment %q lost", c)
		}
	}
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func TestWriteEdited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	writeFile(t, path, personal, 0o640)

	snap, err := EditFile(path, Set(true, "sandbox_workspace_write", "network_access"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "network_access = true # off unless I say so") || !strings.Contains(string(data), "# My Airlock settings") {
		t.Fatalf("written:\n%s", data)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v; want the file's own 0640 kept", info.Mode().Perm())
	}
	if snap.Hash != hashOf(data) {
		t.Errorf("returned snapshot does not describe the file written")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".config.toml.edit-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	t.Run("an edit that changes nothing leaves the file alone", func(t *testing.T) {
		before, _ := ReadSnapshot(path)
		after, err := EditFile(path, Set(true, "sandbox_workspace_write", "network_access"))
		if err != nil {
			t.Fatal(err)
		}
		if !after.ModTime.Equal(before.ModTime) || after.Hash != before.Hash {
			t.Fatal("the file was rewritten for nothing")
		}
	})

	t.Run("a value the parser rejects writes nothing", func(t *testing.T) {
		before, _ := os.ReadFile(path)
		_, err := EditFile(path, Set("sometimes", "approval_policy"))
		if err == nil || !strings.Contains(err.Error(), "not one of") || !strings.Contains(err.Error(), "was not written") {
			t.Fatalf("err = %v; want the parser's complaint and that nothing was written", err)
		}
		after, _ := os.ReadFile(path)
		if string(after) != string(before) {
			t.Fatal("the file changed although the edit was rejected")
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".config.toml.edit-*")); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})

	t.Run("a change on disk since the read is refused", func(t *testing.T) {
		base, err := ReadSnapshot(path)
		if err != nil {
			t.Fatal(err)
		}
		other := strings.Replace(string(base.Data), `approval_policy = "on-request"`, `approval_policy = "never"`, 1)
		writeFile(t, path, other, 0o640)
		_, err = WriteEdited(path, base, Set("read-only", "sandbox_mode"))
		if !errors.Is(err, ErrChangedOnDisk) || !strings.Contains(err.Error(), "reload and try again") {
			t.Fatalf("err = %v; want ErrChangedOnDisk", err)
		}
		now, _ := os.ReadFile(path)
		if string(now) != other {
			t.Fatal("the other writer's change was overwritten")
		}
	})

	t.Run("a file created meanwhile is not overwritten", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "config.toml")
		base, err := ReadSnapshot(fresh)
		if err != nil || base.Exists {
			t.Fatalf("snapshot of a missing file = %+v, %v", base, err)
		}
		writeFile(t, fresh, "sandbox_mode = \"read-only\"\n", 0o600)
		if _, err := WriteEdited(fresh, base, Set(true, "ops", "strict")); !errors.Is(err, ErrChangedOnDisk) {
			t.Fatalf("err = %v; want ErrChangedOnDisk", err)
		}
	})

	t.Run("a missing file is created 0600", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "sub", "config.toml")
		if _, err := EditFile(fresh, Set("never", "approval_policy")); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(fresh)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("created file: %v, %v", info, err)
		}
	})

	t.Run("a symlinked config.toml stays a symlink", func(t *testing.T) {
		d := t.TempDir()
		target := filepath.Join(d, "dotfiles-config.toml")
		link := filepath.Join(d, "config.toml")
		writeFile(t, target, "# managed\n", 0o600)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := EditFile(link, Set(true, "ops", "strict")); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Fatal("the link was replaced by a file")
		}
		if data, _ := os.ReadFile(target); !strings.Contains(string(data), "strict = true") || !strings.HasPrefix(string(data), "# managed") {
			t.Fatalf("target = %q", data)
		}
	})
}

// Concurrent edits from this process are serialized: every one lands, none is lost.
func TestConcurrentEditsAllLand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, path, "# tiers\n[permission.tiers]\n", 0o600)
	tools := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for _, tool := range tools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := EditFile(path, Set("P2", "permission", "tiers", tool))
				if errors.Is(err, ErrChangedOnDisk) {
					mu.Lock()
					refused++
					mu.Unlock()
					continue // the caller reloads and tries again
				}
				if err != nil {
					t.Error(err)
				}
				return
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(path)
	f, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Permission.Tiers) != len(tools) {
		t.Fatalf("tiers = %v; want all %d edits to land\n%s", f.Permission.Tiers, len(tools), data)
	}
	_ = refused
}

// A writer that changes the file between the read and the rename (another process) is
// detected even when its change keeps the size.
func TestChangedOnDiskSameSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, path, "approval_policy = \"never\"\n", 0o600)
	base, _ := ReadSnapshot(path)
	writeFile(t, path, "approval_policy = \"never\" \n", 0o600)
	// Same mtime is possible on coarse clocks: the hash still differs.
	_ = os.Chtimes(path, base.ModTime, base.ModTime)
	if _, err := WriteEdited(path, base, Set(true, "ops", "strict")); !errors.Is(err, ErrChangedOnDisk) {
		t.Fatalf("err = %v; want ErrChangedOnDisk", err)
	}
	_ = time.Now
}

func FuzzApplyEdits(f *testing.F) {
	f.Add([]byte(personal), "network", true)
	f.Add([]byte("a = { b = 1 }\n"), "x\"y", false)
	f.Add([]byte("[t]\r\nk = 1\r\n"), "", true)
	f.Add([]byte("isolation.backend = 'os'\n[[permission.rules]]\ntool='x'\n"), "é", false)
	f.Fuzz(func(t *testing.T, doc []byte, s string, b bool) {
		if len(doc) > 1<<16 {
			return
		}
		edits := []Edit{
			Set(b, "sandbox_workspace_write", "network_access"),
			Set([]string{s, "~/x"}, "sandbox_workspace_write", "writable_roots"),
			Set("P2", "permission", "tiers", s+"t"),
			Set("read-only", "sandbox_mode"),
			AppendTable([]Field{{"tool", "bash"}, {"pattern", s}, {"action", "deny"}}, "permission", "rules"),
			Unset("isolation", "backend"),
			RemoveTable(0, "permission", "rules"),
			Set("never", "approval_policy"),
			Set(b, s+"x", "k"),
		}
		var before map[string]any
		if toml.Unmarshal(doc, &before) != nil {
			// A document that does not parse is refused, never "repaired".
			if _, err := ApplyEdits(doc, edits[0]); err == nil {
				t.Fatalf("edited a document that does not parse: %q", doc)
			}
			return
		}
		for _, e := range edits {
			out, err := ApplyEdits(doc, e)
			if err != nil {
				continue // refused, with a reason
			}
			var after map[string]any
			if err := toml.Unmarshal(out, &after); err != nil {
				t.Fatalf("edit %v broke a valid document: %v\nbefore:\n%q\nafter:\n%q", e, err, doc, out)
			}
			if e.Op == OpSet {
				got, ok := lookup(after, e.Path)
				want, _ := encodeValue(e.Value)
				var w map[string]any
				_ = toml.Unmarshal([]byte("v = "+want), &w)
				if !ok || fmt.Sprint(got) != fmt.Sprint(w["v"]) {
					t.Fatalf("edit %v: read back %v (found %v); want %v\n%q", e, got, ok, w["v"], out)
				}
			}
			if e.Op == OpUnset {
				if _, ok := lookup(after, e.Path); ok {
					t.Fatalf("edit %v: still there\n%q", e, out)
				}
			}
		}
	})
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = mm[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// BenchmarkApplyEdits measures one edit of a typical hand-written config.toml (parse
// for positions, check that it loads, splice the value).
func BenchmarkApplyEdits(b *testing.B) {
	data := []byte(personal)
	for b.Loop() {
		if _, err := ApplyEdits(data, Set(true, "sandbox_workspace_write", "network_access")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEditFile measures a whole edit from the window: read, edit, validate with
// the strict parser, write a temporary file, fsync, rename.
func BenchmarkEditFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(personal), 0o600); err != nil {
		b.Fatal(err)
	}
	on := false
	for b.Loop() {
		on = !on
		if _, err := EditFile(path, Set(on, "sandbox_workspace_write", "network_access")); err != nil {
			b.Fatal(err)
		}
	}
}

// readTestdata reads a fixture of testdata/.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustReadTestdata reads a fixture of testdata/ for a package-level value.
func mustReadTestdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}
