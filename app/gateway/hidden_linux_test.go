package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

const (
	fakeKeyMaterial = "FAKEKEYMATERIALb3BlbnNzaC1rZXktdjE"
	fakeKey         = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fakeKeyMaterial + "\n-----END OPENSSH PRIVATE KEY-----\n"
)

// keyHome is a temporary home directory holding a fake SSH key, a workspace beside it,
// and an MCP session over them whose broker allows every call (the file tools' own
// judgement is what is tested).
type keyHome struct {
	home, ws, key string
	call          func(tool string, args map[string]any) (isError bool, text string)
}

func newKeyHome(t *testing.T) keyHome {
	t.Helper()
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	k := keyHome{home: real(t.TempDir()), ws: real(t.TempDir())}
	k.key = filepath.Join(k.home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(k.key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.key, []byte(fakeKey), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: k.ws, Home: k.home, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	b := &recordingBroker{decide: func(r api.Request) api.Decision {
		return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier", Params: r.Params}
	}}
	cs := connect(t, Options{Policy: pol, Broker: b})
	k.call = func(tool string, args map[string]any) (bool, string) {
		res, text := callText(t, cs, tool, args)
		return res.IsError, text
	}
	return k
}

// dirAndKeyDirLink makes, in the workspace, a directory d holding the file name with
// content and a link e to the key's directory: the pair a flipper exchanges.
func (k keyHome) dirAndKeyDirLink(t *testing.T, name string, content []byte) (d, e string) {
	t.Helper()
	d, e = filepath.Join(k.ws, "d"), filepath.Join(k.ws, "e")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, name), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(k.key), e); err != nil {
		t.Fatal(err)
	}
	return d, e
}

// flipper swaps a and b (renameat2 RENAME_EXCHANGE: atomic, both names always exist)
// until the returned stop is called, the way an agent's own bash can while a file tool
// runs. It skips the test where the file system cannot exchange.
func flipper(t *testing.T, a, b string) (stop func()) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			t.Skipf("renameat2 RENAME_EXCHANGE is not supported here: %v", err)
		}
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// leaksWhileFlipping exchanges a and b over and over while it calls leaked n times, and
// counts the calls that leaked.
func leaksWhileFlipping(t *testing.T, a, b string, n int, leaked func() bool) int {
	t.Helper()
	stop := flipper(t, a, b)
	defer stop()
	leaks := 0
	for range n {
		if leaked() {
			leaks++
		}
	}
	return leaks
}

// TestReadFileSymlinkFlip: the path read_file checked is swapped between a plain file and
// a link to the key while the tool is called in a loop. The check before the broker sees
// whichever is there at that moment; what was opened is what must be judged.
func TestReadFileSymlinkFlip(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "without openat2"}[fallback], func(t *testing.T) {
			noOpenat2 = fallback
			t.Cleanup(func() { noOpenat2 = false })
			k := newKeyHome(t)
			flip, other := filepath.Join(k.ws, "flip"), filepath.Join(k.ws, "other")
			if err := os.WriteFile(flip, []byte("harmless\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(k.key, other); err != nil {
				t.Fatal(err)
			}
			const reads = 2000
			leaks := leaksWhileFlipping(t, flip, other, reads, func() bool {
				_, text := k.call(api.ToolReadFile, map[string]any{"path": flip})
				return strings.Contains(text, fakeKeyMaterial)
			})
			if leaks > 0 {
				t.Fatalf("read_file returned the key in %d of %d reads", leaks, reads)
			}
		})
	}
}

// TestListDirSymlinkFlip: a directory swapped with a link to ~/.ssh while list_dir runs.
func TestListDirSymlinkFlip(t *testing.T) {
	k := newKeyHome(t)
	d, e := k.dirAndKeyDirLink(t, "plain.txt", nil)
	const lists = 2000
	leaks := leaksWhileFlipping(t, d, e, lists, func() bool {
		_, text := k.call(api.ToolListDir, map[string]any{"path": d})
		return strings.Contains(text, "id_rsa")
	})
	if leaks > 0 {
		t.Fatalf("list_dir listed inside ~/.ssh in %d of %d calls", leaks, lists)
	}
}

// TestSearchFilesSymlinkFlip: a directory inside the searched tree swapped with a link to
// ~/.ssh while search_files walks it.
func TestSearchFilesSymlinkFlip(t *testing.T) {
	k := newKeyHome(t)
	d, e := k.dirAndKeyDirLink(t, "id_rsa", []byte("not a key\n"))
	const searches = 1000
	leaks := leaksWhileFlipping(t, d, e, searches, func() bool {
		_, text := k.call(api.ToolSearchFiles, map[string]any{"path": k.ws, "regex": "KEY"})
		return strings.Contains(text, fakeKeyMaterial) || strings.Contains(text, "PRIVATE KEY")
	})
	if leaks > 0 {
		t.Fatalf("search_files read the key in %d of %d searches", leaks, searches)
	}
}

// TestSearchFilesOverHome: a search rooted at the home directory reads every other file
// but nothing hidden — not ~/.ssh, not a link to the key, not a hard link to it.
func TestSearchFilesOverHome(t *testing.T) {
	k := newKeyHome(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(k.home, "notes.txt"), []byte("where is the PRIVATE KEY kept?\n"), 0o644))
	must(os.Symlink(k.key, filepath.Join(k.home, "key-link")))
	must(os.Symlink(filepath.Dir(k.key), filepath.Join(k.home, "ssh-link")))
	must(os.MkdirAll(filepath.Join(k.home, "backup"), 0o755))
	must(os.Link(k.key, filepath.Join(k.home, "backup", "old-key")))
	for _, args := range []map[string]any{
		{"path": k.home, "regex": "PRIVATE KEY"},
		{"path": k.home, "regex": fakeKeyMaterial},
		{"path": "~", "regex": "PRIVATE KEY"},
		{"path": k.home, "glob": "**"},
		{"path": k.home, "glob": "*rsa*"},
	} {
		isErr, text := k.call(api.ToolSearchFiles, args)
		if isErr {
			t.Fatalf("search_files %v: %s", args, text)
		}
		if strings.Contains(text, fakeKeyMaterial) || strings.Contains(text, "BEGIN OPENSSH") || strings.Contains(text, "id_rsa") ||
			strings.Contains(text, "old-key:") {
			t.Fatalf("search_files %v reached the key:\n%s", args, text)
		}
		if args["regex"] == "PRIVATE KEY" && !strings.Contains(text, "notes.txt:1:") {
			t.Fatalf("search_files %v missed the ordinary file:\n%s", args, text)
		}
		if !strings.Contains(text, "skipped") || !strings.Contains(text, "hidden") {
			t.Fatalf("search_files %v does not say it skipped hidden entries:\n%s", args, text)
		}
	}
}

// TestHardLinkToKey: a hard link to the key inside the workspace is the key, whatever its
// name: read, write and edit are refused, and the key stays as it was.
func TestHardLinkToKey(t *testing.T) {
	k := newKeyHome(t)
	link := filepath.Join(k.ws, "notes.txt")
	if err := os.Link(k.key, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{api.ToolReadFile, map[string]any{"path": link}},
		{api.ToolReadFile, map[string]any{"path": "notes.txt"}},
		{api.ToolWriteFile, map[string]any{"path": link, "content": "ssh-ed25519 AAAA attacker\n"}},
		{api.ToolEditFile, map[string]any{"path": link, "old_string": fakeKeyMaterial, "new_string": "x"}},
		{api.ToolSearchFiles, map[string]any{"path": k.ws, "regex": "PRIVATE"}},
	} {
		isErr, text := k.call(c.tool, c.args)
		if strings.Contains(text, fakeKeyMaterial) || strings.Contains(text, "PRIVATE KEY") {
			t.Fatalf("%s %v returned the key: %s", c.tool, c.args, text)
		}
		if c.tool != api.ToolSearchFiles && (!isErr || !strings.Contains(text, "isolation error") || !strings.Contains(text, "hard link")) {
			t.Fatalf("%s %v: %v %q; want an isolation error naming the hard link", c.tool, c.args, isErr, text)
		}
	}
	if got, _ := os.ReadFile(k.key); string(got) != fakeKey {
		t.Fatalf("the key changed: %q", got)
	}
}

// TestWriteHardLinkedFile: any hard-linked file is refused for writing (its other name
// may lie outside the workspace), with the way out; reading an ordinary one is fine.
func TestWriteHardLinkedFile(t *testing.T) {
	k := newKeyHome(t)
	outside := filepath.Join(k.home, "project.conf")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(k.ws, "project.conf")
	if err := os.Link(outside, link); err != nil {
		t.Fatal(err)
	}
	if isErr, text := k.call(api.ToolReadFile, map[string]any{"path": link}); isErr || text != "keep\n" {
		t.Fatalf("read of an ordinary hard-linked file: %v %q", isErr, text)
	}
	isErr, text := k.call(api.ToolWriteFile, map[string]any{"path": link, "content": "changed\n"})
	if !isErr || !strings.Contains(text, "2 hard links") || !strings.Contains(text, "mv FILE.new FILE") {
		t.Fatalf("write of a hard-linked file: %v %q", isErr, text)
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep\n" {
		t.Fatalf("the file outside the workspace changed: %q", got)
	}
}

// TestListDirHome: list_dir of the home directory names ~/.ssh but never lists inside it;
// list_dir of ~/.ssh or of a link to it is refused.
func TestListDirHome(t *testing.T) {
	k := newKeyHome(t)
	if err := os.Symlink(filepath.Dir(k.key), filepath.Join(k.ws, "keys")); err != nil {
		t.Fatal(err)
	}
	isErr, text := k.call(api.ToolListDir, map[string]any{"path": k.home})
	if isErr || strings.Contains(text, "id_rsa") || !strings.Contains(text, ".ssh\t(hidden)") {
		t.Fatalf("list_dir ~: %v %q", isErr, text)
	}
	for _, p := range []string{filepath.Dir(k.key), "keys", "~/.ssh"} {
		isErr, text := k.call(api.ToolListDir, map[string]any{"path": p})
		if !isErr || strings.Contains(text, "id_rsa") || !strings.Contains(text, "isolation error") {
			t.Fatalf("list_dir %s: %v %q", p, isErr, text)
		}
	}
}

// TestWriteIntoHiddenInsideRoot: with the home directory as the workspace (a run opened
// in ~), ~/.ssh lies inside the writable root and must still be neither written nor
// created in.
func TestWriteIntoHiddenInsideRoot(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte(fakeKey), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: home, Home: home, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: Options{Policy: pol}}
	for _, p := range []string{key, filepath.Join(home, ".ssh", "authorized_keys")} {
		if err := writeFile(s.confinedOpen(s.opts.Policy), p, "ssh-ed25519 AAAA attacker\n"); err == nil || !strings.Contains(err.Error(), "isolation error") {
			t.Fatalf("write %s: %v; want an isolation error", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Fatal("authorized_keys was created in ~/.ssh")
	}
	if got, _ := os.ReadFile(key); string(got) != fakeKey {
		t.Fatalf("the key changed: %q", got)
	}
}
