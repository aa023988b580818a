package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// slowServer serves files slowly (8 KiB chunks with a pause, Range supported) and counts
// GETs; hold makes every response stop after half the file until the client leaves.
type slowServer struct {
	srv   *httptest.Server
	files map[string][]byte
	hold  bool
	mu    sync.Mutex
	gets  map[string]int
}

func newSlowServer(t *testing.T, files map[string][]byte, hold bool) *slowServer {
	s := &slowServer{files: files, hold: hold, gets: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		s.mu.Lock()
		s.gets[name]++ // asked for, served or not
		s.mu.Unlock()
		data, ok := s.files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(&slowWriter{ResponseWriter: w, r: r, hold: s.hold && name != "manifest.json", size: len(data)}, r, name, time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

type slowWriter struct {
	http.ResponseWriter
	r    *http.Request
	hold bool
	size int
	sent int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		if w.hold && w.sent >= w.size/2 {
			<-w.r.Context().Done()
			return done, w.r.Context().Err()
		}
		n := min(len(p), 8<<10)
		m, err := w.ResponseWriter.Write(p[:n])
		w.sent, done, p = w.sent+m, done+m, p[n:]
		if err != nil {
			return done, err
		}
		w.ResponseWriter.(http.Flusher).Flush()
		time.Sleep(time.Millisecond)
	}
	return done, nil
}

func (s *slowServer) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[name]
}

// fakeImage is a manifest with a runtime, kernel, initrd and rootfs of random-ish bytes.
func fakeImage() map[string][]byte {
	files := map[string][]byte{}
	type art struct{ name, kind string }
	var arts []map[string]any
	for i, a := range []art{{"qemu-system", "runtime"}, {"vmlinuz", "kernel"}, {"initrd.img", "initrd"}, {"rootfs.qcow2", "rootfs"}} {
		data := bytes.Repeat([]byte(fmt.Sprintf("%s-%d;", a.name, i)), 40000+i*20000)
		files[a.name] = data
		sum := sha256.Sum256(data)
		arts = append(arts, map[string]any{"name": a.name, "kind": a.kind, "arch": runtime.GOARCH, "version": "1", "url": a.name,
			"sha256": hex.EncodeToString(sum[:]), "size": len(data)})
	}
	m, _ := json.Marshal(map[string]any{"name": "test", "version": "t1", "artifacts": arts})
	files["manifest.json"] = m
	return files
}

// runCore opens a core in a private home and serves its API; it returns an HTTP client
// on its socket.
func runCore(t *testing.T) (*Core, *http.Client) {
	t.Helper()
	return runCoreAt(t, t.TempDir())
}

// runCoreAt is runCore with its files under base.
func runCoreAt(t testing.TB, base string) (*Core, *http.Client) {
	t.Helper()
	c, _ := lifeCore(t, base)
	return c, coreClient(c)
}

// coreClient is an HTTP client of c's socket.
func coreClient(c *Core) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", c.Paths.Socket)
	}}}
}

func postStatus(t *testing.T, hc *http.Client, path, body string) vminstall.Status {
	t.Helper()
	resp, err := hc.Post("http://airlock"+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return vminstall.Status{}
	}
	defer resp.Body.Close()
	var st vminstall.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode >= 300 {
		t.Errorf("%s: %d %v", path, resp.StatusCode, err)
	}
	return st
}

// TestVMInstallRouteProgressAndOneInstall: two concurrent POSTs start one install, whose
// progress events arrive in order and end at ready with 100%.
func TestVMInstallRouteProgressAndOneInstall(t *testing.T) {
	c, hc := runCore(t)
	srv := newSlowServer(t, fakeImage(), false)
	sub := c.Bus.Subscribe(10000, api.TopicSandboxInstall)
	defer sub.Close()

	body := fmt.Sprintf(`{"manifest": %q}`, srv.srv.URL+"/manifest.json")
	var wg sync.WaitGroup
	sts := make([]vminstall.Status, 2)
	for i := range sts {
		wg.Add(1)
		go func() { defer wg.Done(); sts[i] = postStatus(t, hc, "/v1/sandbox/vm/install", body) }()
	}
	wg.Wait()
	for i, st := range sts {
		if !st.Downloading && !st.Ready() {
			t.Errorf("POST %d: neither downloading nor ready: %+v", i, st)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	final, err := c.VMInstallWait(ctx)
	if err != nil || !final.ImageReady {
		t.Fatalf("install: %v %+v", err, final)
	}
	for _, name := range []string{"manifest.json", "vmlinuz", "initrd.img", "rootfs.qcow2"} {
		if n := srv.count(name); n != 1 {
			t.Errorf("%s fetched %d times: the two POSTs did not share one install", name, n)
		}
	}
	// Events in order: stages never go back, percent never falls within a stage, the
	// image stage reaches 100 and the last event is ready.
	order := map[string]int{vminstall.StageDetect: 0, vminstall.StageRuntime: 1, vminstall.StageImage: 2, vminstall.StageReady: 3}
	var last vminstall.Status
	stage, pct, imageSteps, saw100 := -1, -1, 0, false
	for len(sub.C) > 0 {
		ev := <-sub.C
		var st vminstall.Status
		if err := strictJSON(ev.Payload, &st); err != nil {
			t.Fatalf("payload: %v", err)
		}
		o := order[st.Progress.Stage]
		if o < stage && st.Progress.Stage != "" {
			t.Fatalf("stage went back to %s after %d", st.Progress.Stage, stage)
		}
		if o > stage {
			stage, pct = o, -1
		}
		if st.Progress.Percent < pct {
			t.Fatalf("percent fell from %d to %d in %s", pct, st.Progress.Percent, st.Progress.Stage)
		}
		pct = st.Progress.Percent
		if st.Progress.Stage == vminstall.StageImage {
			imageSteps++
			saw100 = saw100 || st.Progress.Percent == 100
		}
		last = st
	}
	if imageSteps < 10 || !saw100 {
		t.Errorf("image stage: %d progress events, reached 100%%: %v", imageSteps, saw100)
	}
	if last.Progress.Stage != vminstall.StageReady || last.Progress.Percent != 100 || last.Downloading {
		t.Errorf("last event: %+v", last)
	}
	if st := c.VMStatus(context.Background()); !st.ImageReady {
		t.Errorf("GET status after install: %+v", st)
	}
}

// TestVMInstallCancelLeavesNoCompleteFile: cancelling mid-download keeps only .part files.
func TestVMInstallCancelLeavesNoCompleteFile(t *testing.T) {
	c, hc := runCore(t)
	srv := newSlowServer(t, fakeImage(), true)
	st := postStatus(t, hc, "/v1/sandbox/vm/install", fmt.Sprintf(`{"manifest": %q}`, srv.srv.URL+"/manifest.json"))
	if !st.Downloading {
		t.Fatalf("not downloading: %+v", st)
	}
	// Wait until a download is under way (a .part file with bytes in it).
	deadline := time.Now().Add(30 * time.Second)
	for {
		parts, _ := filepath.Glob(filepath.Join(c.Paths.SandboxDir, "*", "*.part"))
		parts2, _ := filepath.Glob(filepath.Join(c.Paths.SandboxDir, "*.part"))
		if len(parts)+len(parts2) > 0 {
			break
		}
		if time.Now().After(deadline) || !c.VMStatus(context.Background()).Downloading {
			t.Fatalf("no download started: %+v", c.VMStatus(context.Background()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	postStatus(t, hc, "/v1/sandbox/vm/cancel", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	final, err := c.VMInstallWait(ctx)
	if err == nil || final.ImageReady || final.Downloading || !strings.Contains(final.Error, "cancelled") {
		t.Fatalf("after cancel: %v %+v", err, final)
	}
	filepath.Walk(c.Paths.SandboxDir, func(p string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			switch filepath.Base(p) {
			case "vmlinuz", "initrd.img", "rootfs.qcow2":
				t.Errorf("%s is named as complete after a cancelled install", p)
			}
		}
		return nil
	})
}

// TestAuditRoute: the execution-mode decision is in the permission audit of the run.
func TestAuditRoute(t *testing.T) {
	c, _ := runCore(t)
	c.auditRoute(sandboxexec.Route{RunID: 7, Command: "pip install x", Cwd: "/w", Mode: "auto", Where: sandboxexec.WhereMicroVM, Reason: "auto: package install `pip install x`"})
	recs, err := c.Broker.Audit(context.Background(), permission.AuditQuery{Run: "7"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("audit: %v %+v", err, recs)
	}
	if r := recs[0]; r.Verdict != permission.Allow || !strings.Contains(r.Subject, "micro-VM") || !strings.Contains(r.Reasons, "package install") {
		t.Errorf("record: %+v", r)
	}
}

// TestInstalledMicroVMTakesTheWaitingAutoRun: an auto run waiting on "may it run on the
// host?" (no micro-VM yet) is routed to the micro-VM as soon as the install reports ready,
// without a restart: the question leaves the pending list and the audit records the
// micro-VM route. (The image is fake, so the VM itself is not booted to the end: the run
// is cancelled once its route is known.)
func TestInstalledMicroVMTakesTheWaitingAutoRun(t *testing.T) {
	c, _ := runCore(t)
	ctx := context.Background()
	if st := c.VMStatus(ctx); st.ImageReady {
		t.Fatalf("a fresh home already has a micro-VM image: %+v", st)
	}
	ws := filepath.Join(c.getenv("HOME"), "Airlock")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "install", Cwd: ws, Overrides: departments.Defaults{ExecutionMode: "auto"},
		Argv: []string{"sh", "-c", "true || pip install requests"}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Dispatch.RunNow(ctx, "install")
	if err != nil {
		t.Fatal(err)
	}
	question := fmt.Sprintf("run-%d-host", r.ID)
	pending := func() bool {
		for _, p := range c.Broker.Pending() {
			if p.ID == question {
				return true
			}
		}
		return false
	}
	waitUntil(t, "the host question pending", 30*time.Second, pending)

	srv := newSlowServer(t, fakeImage(), false)
	if _, err := c.VMInstall(ctx, api.VMInstallIn{Manifest: srv.srv.URL + "/manifest.json"}); err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if st, err := c.VMInstallWait(ictx); err != nil || !st.Ready() {
		t.Fatalf("install: %v %+v", err, st)
	}

	var route api.AuditRecord
	waitUntil(t, "the micro-VM route in the audit", 30*time.Second, func() bool {
		recs, _ := c.Broker.Audit(ctx, permission.AuditQuery{Run: fmt.Sprint(r.ID)})
		for _, rec := range recs {
			if rec.RequestID == fmt.Sprintf("run-%d-route", r.ID) {
				route = rec
				return true
			}
		}
		return false
	})
	if !strings.Contains(route.Subject, "→ micro-VM") || !strings.Contains(route.Reasons, "auto: package install") || route.Verdict != permission.Allow {
		t.Errorf("route audited: %+v", route)
	}
	if pending() {
		t.Error("the host question is still pending after the micro-VM became ready")
	}
	if got, _ := c.Dispatch.Run(ctx, r.ID); !dispatch.Finished(got.Status) {
		_ = c.Dispatch.Cancel(ctx, r.ID, "test")
	}
	waitUntil(t, "the run to end", 30*time.Second, func() bool {
		got, _ := c.Dispatch.Run(ctx, r.ID)
		return dispatch.Finished(got.Status)
	})
}

func waitUntil(t testing.TB, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
