package departments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/testdb"
	"gorm.io/gorm"
)

func openDB(t testing.TB) *gorm.DB {
	t.Helper()
	return testdb.Open(t, filepath.Join(t.TempDir(), "airlock.db"), Migrate)
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Publish(topic string, _ any) {
	r.mu.Lock()
	r.events = append(r.events, topic)
	r.mu.Unlock()
}

// layout builds: home/, home/ws (workspace root), home/dept (department), home/auth
// (authorized later), home/outside, and symlinks in and out.
func layout(t *testing.T) (root string, svc *Service) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/ws/proj", "home/dept/sub", "home/auth/deep", "home/outside/x", "home/.ssh"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink(filepath.Join(root, "home/outside"), filepath.Join(root, "home/ws/escape")))
	must(t, os.Symlink(filepath.Join(root, "home/ws/proj"), filepath.Join(root, "home/outside/into")))
	must(t, os.Symlink("../outside", filepath.Join(root, "home/dept/rel-escape")))
	svc, err = New(openDB(t), Options{WorkspaceRoots: []string{"~/ws"}, HomeDir: filepath.Join(root, "home"), Publisher: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Add(ctx, "ops", filepath.Join(root, "home/dept"), Defaults{SandboxMode: "danger-full-access"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authorize(ctx, filepath.Join(root, "home/auth"), "tester", false); err != nil {
		t.Fatal(err)
	}
	return root, svc
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKnown(t *testing.T) {
	root, svc := layout(t)
	h := filepath.Join(root, "home")
	tests := []struct {
		name, path string
		known      bool
		by         string
	}{
		{"workspace root itself", h + "/ws", true, KnownByWorkspace},
		{"inside workspace", h + "/ws/proj", true, KnownByWorkspace},
		{"department dir", h + "/dept", true, KnownByDepartment},
		{"below department", h + "/dept/sub", true, KnownByDepartment},
		{"authorized place", h + "/auth", true, KnownByAuthorized},
		{"below authorized", h + "/auth/deep", true, KnownByAuthorized},
		{"outside", h + "/outside/x", false, ""},
		{"home itself", h, false, ""},
		{"home .ssh", h + "/.ssh", false, ""},
		{"root", "/", false, ""},
		{"prefix lookalike", h + "/wsx", false, ""},
		{"dotdot out of workspace", h + "/ws/../outside", false, ""},
		{"symlink in workspace pointing out", h + "/ws/escape", false, ""},
		{"below symlink pointing out", h + "/ws/escape/x", false, ""},
		{"relative symlink in department pointing out", h + "/dept/rel-escape/x", false, ""},
		{"symlink outside pointing in", h + "/outside/into", true, KnownByWorkspace},
		{"symlink then dotdot follows the target", h + "/outside/into/..", true, KnownByWorkspace},
		{"missing dir inside workspace", h + "/ws/not-yet", true, KnownByWorkspace},
		{"tilde", "~/dept/sub", true, KnownByDepartment},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.Known(context.Background(), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Known != tc.known || got.By != tc.by {
				t.Fatalf("Known(%s) = %+v, want known=%v by=%q", tc.path, got, tc.known, tc.by)
			}
		})
	}
}

func TestAuthorizeHomeNeedsConfirmation(t *testing.T) {
	root, svc := layout(t)
	ctx := context.Background()
	h := filepath.Join(root, "home")
	for _, dir := range []string{h, "~", root, "/", h + "/ws/.."} {
		_, err := svc.Authorize(ctx, dir, "tester", false)
		var ce *ConfirmationRequiredError
		if !errors.As(err, &ce) {
			t.Fatalf("Authorize(%s) without confirmation: err = %v, want ConfirmationRequiredError", dir, err)
		}
		if got := err.Error(); !strings.Contains(got, "--confirm-home") || !strings.Contains(got, ".ssh") {
			t.Fatalf("message does not name the way out and what becomes writable: %s", got)
		}
	}
	if r, _ := svc.Known(ctx, h+"/.ssh"); r.Known {
		t.Fatal("home became known without confirmation")
	}
	if _, err := svc.Authorize(ctx, h, "tester", true); err != nil {
		t.Fatal(err)
	}
	if r, _ := svc.Known(ctx, h+"/.ssh"); !r.Known || r.By != KnownByAuthorized {
		t.Fatalf("home not known after confirmed authorization: %+v", r)
	}
}

func TestAuthorizeRejectsMissingAndFiles(t *testing.T) {
	root, svc := layout(t)
	ctx := context.Background()
	if _, err := svc.Authorize(ctx, filepath.Join(root, "nope"), "t", false); err == nil {
		t.Fatal("authorized a missing directory")
	}
	f := filepath.Join(root, "file")
	must(t, os.WriteFile(f, nil, 0o644))
	if _, err := svc.Authorize(ctx, f, "t", false); err == nil {
		t.Fatal("authorized a file")
	}
	if _, err := svc.Authorize(ctx, "relative/dir", "t", false); err == nil {
		t.Fatal("authorized a relative path")
	}
}

func TestRevoke(t *testing.T) {
	root, svc := layout(t)
	ctx := context.Background()
	dir := filepath.Join(root, "home/auth/deep")
	if r, _ := svc.Known(ctx, dir); !r.Known {
		t.Fatal("not known before revoke")
	}
	pl, err := svc.Revoke(ctx, filepath.Join(root, "home/auth"), "tester")
	if err != nil {
		t.Fatal(err)
	}
	if pl.RevokedAt == nil || pl.By != "tester" {
		t.Fatalf("revoked place lost who/when: %+v", pl)
	}
	if r, _ := svc.Known(ctx, dir); r.Known {
		t.Fatal("still known after revoke")
	}
	all, _ := svc.Places(ctx, true)
	if len(all) != 1 || all[0].RevokedAt == nil {
		t.Fatalf("history lost: %+v", all)
	}
	// Authorizing again brings it back.
	if _, err := svc.Authorize(ctx, filepath.Join(root, "home/auth"), "again", false); err != nil {
		t.Fatal(err)
	}
	if r, _ := svc.Known(ctx, dir); !r.Known {
		t.Fatal("not known after re-authorize")
	}
	if _, err := svc.Revoke(ctx, filepath.Join(root, "home/outside"), "t"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke of unknown place: %v", err)
	}
}

func TestDepartmentValidation(t *testing.T) {
	root, svc := layout(t)
	ctx := context.Background()
	cases := []struct {
		name, dir string
		d         Defaults
	}{
		{"bad name", root, Defaults{}},
		{"missing", filepath.Join(root, "nope"), Defaults{}},
		{"badmode", root, Defaults{SandboxMode: "yolo"}},
		{"badappr", root, Defaults{ApprovalPolicy: "sometimes"}},
		{"badexec", root, Defaults{ExecutionMode: "cloud"}},
		{"badposture", root, Defaults{Posture: "cowboy"}},
		{"ops", root, Defaults{}}, // duplicate name
	}
	cases[0].name = "bad name!"
	for _, tc := range cases {
		if _, err := svc.Add(ctx, tc.name, tc.dir, tc.d); err == nil {
			t.Errorf("Add(%q, %q, %+v) accepted", tc.name, tc.dir, tc.d)
		}
	}
	d, err := svc.Get(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if d.Defaults.SandboxMode != "full-access" {
		t.Fatalf("alias not normalized: %q", d.Defaults.SandboxMode)
	}
	if err := svc.Remove(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if r, _ := svc.Known(ctx, filepath.Join(root, "home/dept")); r.Known {
		t.Fatal("removed department's directory still known")
	}
}

func TestWatchMarksMissingAndBack(t *testing.T) {
	root, svc := layout(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Department, 16)
	svc.OnChange(func(d Department) { changes <- d })
	done := make(chan error, 1)
	go func() { done <- svc.Watch(ctx, time.Hour) }() // poll disabled in effect: fsnotify must do it
	dir := filepath.Join(root, "home/dept")
	waitStatus := func(want string) Department {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case d := <-changes:
				if d.Name == "ops" && d.Status == want {
					got, err := svc.Get(ctx, "ops")
					if err != nil || got.Status != want {
						t.Fatalf("stored status %q (%v), want %q", got.Status, err, want)
					}
					return d
				}
			case <-deadline:
				t.Fatalf("department never became %s", want)
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // let the watcher add its watches
	must(t, os.Rename(dir, dir+".old"))
	d := waitStatus(StatusMissing)
	if d.StatusReason == "" {
		t.Fatal("missing without a reason")
	}
	if r, _ := svc.Known(ctx, dir+".old/sub"); r.Known {
		t.Fatal("renamed department directory still known")
	}
	must(t, os.Mkdir(dir, 0o755))
	waitStatus(StatusOK)
	must(t, os.RemoveAll(dir))
	waitStatus(StatusMissing)
	if r, _ := svc.Known(ctx, dir); r.Known {
		t.Fatal("removed department directory still known")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWorkspaceRootReplacedByLink: a workspace root replaced by a symlink to the home
// directory must not make the home known — neither at once (roots are resolved at every
// check), nor after a config reload, nor after a restart (a new Service).
func TestWorkspaceRootReplacedByLink(t *testing.T) {
	tests := []struct {
		name string
		root string // configured, below home
		// swap replaces part of the root's path by a link toward home.
		swap func(t *testing.T, home string)
	}{
		{"the root itself", "~/ws", func(t *testing.T, home string) {
			must(t, os.Rename(filepath.Join(home, "ws"), filepath.Join(home, "ws.old")))
			must(t, os.Symlink(home, filepath.Join(home, "ws")))
		}},
		{"a relative link to ..", "~/ws", func(t *testing.T, home string) {
			must(t, os.Rename(filepath.Join(home, "ws"), filepath.Join(home, "ws.old")))
			must(t, os.Symlink("..", filepath.Join(home, "ws")))
		}},
		{"a directory on its way", "~/code/ws", func(t *testing.T, home string) {
			// ~/code -> ~/up, where ~/up/ws -> home: the configured ~/code/ws is not a link itself.
			must(t, os.Rename(filepath.Join(home, "code"), filepath.Join(home, "code.old")))
			must(t, os.MkdirAll(filepath.Join(home, "up"), 0o755))
			must(t, os.Symlink(home, filepath.Join(home, "up", "ws")))
			must(t, os.Symlink(filepath.Join(home, "up"), filepath.Join(home, "code")))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			home := filepath.Join(root, "home")
			must(t, os.MkdirAll(filepath.Join(home, "ws", "proj"), 0o755))
			must(t, os.MkdirAll(filepath.Join(home, "code", "ws"), 0o755))
			db := openDB(t)
			configured := []string{tc.root}
			svc, err := New(db, Options{WorkspaceRoots: configured, HomeDir: home})
			must(t, err)
			ctx := context.Background()
			inRoot := filepath.Join(home, strings.TrimPrefix(tc.root, "~/"))
			if k, err := svc.Known(ctx, inRoot); err != nil || !k.Known {
				t.Fatalf("before the swap, %s: %+v %v", inRoot, k, err)
			}
			tc.swap(t, home)
			check := func(when string, svc *Service) {
				t.Helper()
				for _, p := range []string{home, filepath.Join(home, ".profile"), filepath.Join(home, "ws.old")} {
					k, err := svc.Known(ctx, p)
					must(t, err)
					if k.Known {
						t.Fatalf("%s: %s is known (%+v)", when, p, k)
					}
				}
				places, err := svc.AllKnown(ctx)
				must(t, err)
				var ws []map[string]any
				for _, pl := range places {
					if pl.By == KnownByWorkspace {
						raw, _ := json.Marshal(pl)
						var m map[string]any
						must(t, json.Unmarshal(raw, &m))
						ws = append(ws, m)
					}
				}
				if len(ws) != 1 || ws[0]["status"] != "refused" || !strings.Contains(fmt.Sprint(ws[0]["reason"]), "link") ||
					!strings.Contains(fmt.Sprint(ws[0]["reason"]), "[workspace] roots") {
					t.Fatalf("%s: the workspace root's place status does not say it is refused: %v", when, ws)
				}
			}
			check("at once", svc)
			must(t, svc.SetWorkspaceRoots(configured)) // a config reload
			check("after a reload", svc)
			if tc.name == "the root itself" {
				svc2, err := New(db, Options{WorkspaceRoots: configured, HomeDir: home}) // a restart
				must(t, err)
				check("after a restart", svc2)
			}
		})
	}
}

// TestDepartmentDirectoryReplacedByLink: Known judges a department by its directory as
// it is now, before the watcher marks it missing.
func TestDepartmentDirectoryReplacedByLink(t *testing.T) {
	root, svc := layout(t)
	h := filepath.Join(root, "home")
	must(t, os.Rename(filepath.Join(h, "dept"), filepath.Join(h, "dept.old")))
	must(t, os.Symlink(h, filepath.Join(h, "dept")))
	k, err := svc.Known(context.Background(), h)
	must(t, err)
	if k.Known {
		t.Fatalf("home is known through a department directory replaced by a link: %+v", k)
	}
}
