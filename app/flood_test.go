package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/permission"
)

// askFlood runs inside a sandbox, with arguments inflight and total: it keeps inflight
// asks open on the sandbox's ask-only channel (an await of
// an rm -rf, which waits for the person), opening a new one for each that is answered
// or refused, until total were opened and the file "stop" appears in the working directory. It writes
// "ready" once its first wave is open, and prints what the channel answered.
const askFlood = `
import json, os, resource, selectors, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
host, port = os.environ["AIRLOCK_ASK_SOCKET"].rsplit(":", 1)
inflight, total = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"tool": "bash", "params": {"command": "rm -rf build\n#\u202e ok"}, "context": {"caller": {"description": "flood\nAPPROVED \u202e" + "x" * 5000}}}).encode()
req = ("POST /v1/permission/await HTTP/1.1\r\nHost: ask\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)).encode() + body
sel = selectors.DefaultSelector()
stats = {"opened": 0, "200": 0, "429": 0, "other": 0, "reset": 0, "connect_failed": 0}
def open_one():
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect((host, int(port)))
    except BlockingIOError:
        pass
    except OSError:
        stats["connect_failed"] += 1
        s.close()
        return
    stats["opened"] += 1
    sel.register(s, selectors.EVENT_WRITE)
for i in range(min(inflight, total)):
    open_one()
open("ready", "w").write("ready\n")
deadline = time.time() + 240
while time.time() < deadline:
    if stats["opened"] >= total and os.path.exists("stop"):
        break
    for key, ev in sel.select(timeout=0.5):
        s = key.fileobj
        if ev & selectors.EVENT_WRITE:
            try:
                s.send(req)
                sel.modify(s, selectors.EVENT_READ)
                continue
            except OSError:
                stats["reset"] += 1
        else:
            try:
                head = s.recv(64)
            except OSError:
                head = b""
            if head.startswith(b"HTTP/1.1 200"):
                stats["200"] += 1
            elif head.startswith(b"HTTP/1.1 429"):
                stats["429"] += 1
            elif head:
                stats["other"] += 1
            else:
                stats["reset"] += 1
        sel.unregister(s)
        s.close()
        if stats["opened"] < total:
            open_one()
stats["still_open"] = len(sel.get_map())
print("flood", json.dumps(stats), flush=True)
`

// TestAskFloodFromOneSandbox: code inside one real scheduled run's sandbox keeps
// thousands of asks open on its ask-only channel (20,000 in all) while the person lists
// the approvals and answers another caller's question over the core's socket. The
// person's list and answer complete promptly; the sandbox gets at most its cap of
// waiting requests and its connections beyond the cap are refused with the reason; the
// core's descriptors and memory stay bounded; the refusals are audited once and logged
// once with a count, not once per connection. The newlines and bidi override the
// sandbox puts in its label and command reach the person's list as escapes.
func TestAskFloodFromOneSandbox(t *testing.T) {
	const total = 20000
	logs := captureLogs(t)
	fds0, rss0 := openFDs(), rssBytes()
	var maxFDs, maxRSS atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			maxFDs.Store(max(maxFDs.Load(), int64(openFDs())))
			maxRSS.Store(max(maxRSS.Load(), rssBytes()))
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	f := startAskFlood(t, total)
	c, hc, repo, runID := f.c, f.hc, f.repo, f.runID
	ctx := context.Background()
	fromRun := f.fromRun

	// Another caller (an API client over the socket) asks; the person lists and answers it.
	awaited := make(chan time.Time, 1)
	go func() {
		var d api.Decision
		err := postJSON(hc, "/v1/permission/await", api.Request{Tool: "bash", Params: json.RawMessage(`{"command":"rm -rf /tmp/person-test"}`),
			Context: api.Context{Session: "person-test", Cwd: repo}}, &d)
		if err != nil || d.Verdict != api.Deny {
			t.Errorf("the other caller's await: %v %+v", err, d)
		}
		awaited <- time.Now()
	}()
	var lists []time.Duration
	var theirs string
	deadline := time.Now().Add(time.Minute)
	for theirs == "" || len(lists) < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the person's list never showed the other caller's question (%d lists)", len(lists))
		}
		t0 := time.Now()
		var ps []api.PendingRequest
		if err := getJSON(hc, "/v1/approvals", &ps); err != nil {
			t.Fatalf("the person's list: %v", err)
		}
		lists = append(lists, time.Since(t0))
		if n := fromRun(ps); n > permission.DefaultMaxPendingPerCaller {
			t.Errorf("the sandbox has %d requests waiting, above its cap of %d", n, permission.DefaultMaxPendingPerCaller)
		}
		for _, p := range ps {
			if p.Request.Context.Session == "person-test" {
				theirs = p.ID
			}
			// What the sandbox put in its labels shows on one line, bounded; its command
			// stays exact in the parameters.
			if p.Request.Context.Run == runID && (strings.ContainsAny(p.Summary+p.Request.Context.Caller.Description, "\n\u202e") ||
				len(p.Request.Context.Caller.Description) > 4*api.LabelDescription || !strings.Contains(string(p.Request.Params), `build\n#\u202e ok`)) {
				t.Errorf("a sandbox's label reaches the person as it wrote it: %q, %q; params %s", p.Summary, p.Request.Context.Caller.Description, p.Request.Params)
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t0 := time.Now()
	var d api.Decision
	if err := postJSON(hc, "/v1/approvals/"+theirs+"/answer", api.AnswerIn{Allow: false}, &d); err != nil {
		t.Fatalf("the person's answer: %v", err)
	}
	answered := time.Since(t0)
	var delivered time.Duration
	select {
	case at := <-awaited:
		delivered = at.Sub(t0)
	case <-time.After(30 * time.Second):
		t.Fatal("the other caller never got the person's answer")
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i] < lists[j] })
	t.Logf("during the flood: %d lists, median %v, slowest %v; the answer took %v, reached its caller after %v",
		len(lists), lists[len(lists)/2], lists[len(lists)-1], answered, delivered)
	// Generous bounds (a loaded CI machine); the flood once held the list for 30 s.
	if slow := lists[len(lists)-1]; slow > 5*time.Second || answered > 5*time.Second || delivered > 5*time.Second {
		t.Errorf("the flood delayed the person: slowest list %v, answer %v, delivered after %v", slow, answered, delivered)
	}

	out := f.stop()
	close(stopSampling)
	<-sampled
	t.Logf("flood output:\n%s", out)
	t.Logf("the core's descriptors: %d before, at most %d during; its RSS: %d MiB before, at most %d MiB during",
		fds0, maxFDs.Load(), rss0>>20, maxRSS.Load()>>20)
	opened, refused := 0, 0
	for _, line := range strings.Split(string(out), "\n") {
		if _, js, ok := strings.Cut(line, "flood "); ok {
			var st map[string]int
			if json.Unmarshal([]byte(js), &st) == nil {
				opened += st["opened"]
				refused += st["429"]
			}
		}
	}
	if opened < total || refused == 0 {
		t.Errorf("the flood opened %d asks (want %d), %d refused with 429", opened, total, refused)
	}
	if extra := maxFDs.Load() - int64(fds0); extra > 1000 {
		t.Errorf("the core held %d more descriptors during the flood (its cap is %d connections)", extra, MaxAsksPerSandbox)
	}
	if grew := maxRSS.Load() - rss0; grew > 512<<20 {
		t.Errorf("the core's RSS grew by %d MiB during the flood", grew>>20)
	}

	lines := logs()
	if n := strings.Count(lines, "too many open files"); n > 0 {
		t.Errorf("the core ran out of descriptors: %d log lines say so", n)
	}
	if n := strings.Count(lines, "reached its cap of open connections"); n < 1 || n > 4 {
		t.Errorf("the connection cap was logged %d times, want once per time it was reached", n)
	}
	if n := strings.Count(lines, "reached its cap of requests waiting"); n > 4 {
		t.Errorf("the pending cap was logged %d times, want once per time it was reached", n)
	}
	recs, err := c.Broker.Audit(ctx, permission.AuditQuery{Run: runID, Verdict: permission.Deny, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	capped := 0
	for _, rec := range recs {
		if strings.Contains(rec.Reasons, "the most it may") {
			capped++
		}
	}
	t.Logf("audit: %d deny rows of the run, %d of them refusals at a cap", len(recs), capped)
	if capped < 1 || capped > 8 {
		t.Errorf("%d audit rows of refusals at a cap, want a few (one each time the cap was reached), not one per refusal", capped)
	}
}

// askFloodRun is a scheduled run flooding its sandbox's ask-only channel (askFlood).
type askFloodRun struct {
	c     *Core
	hc    *http.Client
	repo  string
	runID string
	stop  func() string // ends the flood and returns the run's log
}

// fromRun counts the requests of ps that the flooding run raised.
func (f askFloodRun) fromRun(ps []api.PendingRequest) (n int) {
	for _, p := range ps {
		if p.Request.Context.Run == f.runID {
			n++
		}
	}
	return n
}

// startAskFlood starts a core and a run whose sandbox opens total asks on its channel,
// as many at once as its file limit allows, and returns once the first wave is open
// and the sandbox has its cap of requests waiting for the person.
func startAskFlood(tb testing.TB, total int) askFloodRun {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		tb.Skip("bubblewrap not installed")
	}
	c, hc := runCoreAt(tb, vartmp.Dir(tb, "airlock-flood-"))
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(filepath.Join(repo, "build"), 0o755)
	// The core's file limit is the same as the sandbox's.
	inflight := min(19000, fileLimit(tb)-500)
	tk := createTask(tb, c, dispatch.TaskSpec{Name: "flood", Cwd: repo,
		Argv: []string{"python3", "-c", askFlood, strconv.Itoa(inflight), strconv.Itoa(total)}})
	r, err := c.Dispatch.RunNow(ctx, tk.Name)
	if err != nil {
		tb.Fatal(err)
	}
	waitUntil(tb, "the flood to start", 2*time.Minute, func() bool {
		if got, _ := c.Dispatch.Run(ctx, r.ID); dispatch.Finished(got.Status) {
			out, _ := os.ReadFile(got.LogPath)
			tb.Fatalf("the flood's run ended before it began: %s (%s)\n%s", got.Status, got.Reason, out)
		}
		_, err := os.Stat(filepath.Join(repo, "ready"))
		return err == nil
	})
	f := askFloodRun{c: c, hc: hc, repo: repo, runID: strconv.FormatUint(uint64(r.ID), 10)}
	waitUntil(tb, "the sandbox's asks to wait for the person", time.Minute, func() bool {
		return f.fromRun(c.Broker.Pending()) >= permission.DefaultMaxPendingPerCaller
	})
	f.stop = func() string {
		os.WriteFile(filepath.Join(repo, "stop"), []byte("stop\n"), 0o644)
		var got dispatch.Run
		waitUntil(tb, "the flood's run to finish", 4*time.Minute, func() bool { got, _ = c.Dispatch.Run(ctx, r.ID); return dispatch.Finished(got.Status) })
		out, _ := os.ReadFile(got.LogPath)
		return string(out)
	}
	return f
}

// BenchmarkApprovalsListDuringAskFlood: the person's list of approvals over the socket
// (`airlock approvals list`) while one sandbox holds thousands of asks open on its
// ask-only channel.
func BenchmarkApprovalsListDuringAskFlood(b *testing.B) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	f := startAskFlood(b, 20000)
	defer f.stop()
	var ps []api.PendingRequest
	for b.Loop() {
		if err := getJSON(f.hc, "/v1/approvals", &ps); err != nil {
			b.Fatal(err)
		}
	}
}

// captureLogs tees slog's and the log package's output (net/http logs accept errors
// there) for the test; the returned function reads what was written so far.
func captureLogs(t *testing.T) func() string {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	prevSlog, prevLog := slog.Default(), log.Writer()
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.SetOutput(w)
	t.Cleanup(func() { slog.SetDefault(prevSlog); log.SetOutput(prevLog) })
	return func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func fileLimit(t testing.TB) int {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Skip("no /proc/self/limits")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 5 && strings.HasPrefix(line, "Max open files") {
			n, err := strconv.Atoi(f[3])
			if err == nil {
				return n
			}
		}
	}
	return 1024
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func getJSON(hc *http.Client, path string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://airlock"+path, nil)
	return doJSON(hc, req, out)
}

func postJSON(hc *http.Client, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://airlock"+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return doJSON(hc, req, out)
}

func doJSON(hc *http.Client, req *http.Request, out any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, e.Message)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// askTrickle runs inside a sandbox: it trickles a request's headers, then another's
// body, one byte a second to the ask-only channel, and prints how long the channel let
// each run; meanwhile an await of an rm -rf waits for the person longer than either
// timeout and prints the verdict it got.
const askTrickle = `
import json, os, socket, threading, time, urllib.request
host, port = os.environ["AIRLOCK_ASK_SOCKET"].rsplit(":", 1)
body = json.dumps({"tool": "bash", "params": {"command": "rm -rf build"}}).encode()
head = ("POST /v1/permission/await HTTP/1.1\r\nHost: ask\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)).encode()
def trickle(name, sent, trickled):
    s = socket.create_connection((host, int(port)))
    s.settimeout(1)
    t0 = time.time()
    s.sendall(sent)
    for i in range(len(trickled)):
        try:
            s.send(trickled[i:i+1])
            if s.recv(1) == b"":
                break
            break  # the server answered (400): it is about to close
        except socket.timeout:
            continue
        except OSError:
            break
    else:
        pass
    print("trickle", name, "%.1f" % (time.time() - t0), flush=True)
def await_one():
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request("http://" + host + ":" + port + "/v1/permission/await", data=body, method="POST", headers={"Content-Type": "application/json"})
    with opener.open(req, timeout=120) as r:
        print("await", r.status, json.loads(r.read()).get("verdict"), flush=True)
a = threading.Thread(target=await_one)
a.start()
trickle("headers", b"", head + body)
trickle("body", head, body)
a.join()
`

// TestAskChannelCutsSlowRequests: inside a real run's sandbox, a request trickled one
// byte a second to the ask-only channel, headers or body, is cut once the read timeout
// passes (2 s here), while an await that waits for the person longer than both gets the
// person's answer.
func TestAskChannelCutsSlowRequests(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	c, _ := runCoreAt(t, vartmp.Dir(t, "airlock-trickle-"))
	c.askTimeouts = localapi.Timeouts{Header: 2 * time.Second, Body: 2 * time.Second}
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(filepath.Join(repo, "build"), 0o755)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "trickle", Cwd: repo, Argv: []string{"python3", "-c", askTrickle}})
	go func() {
		// The person answers after both timeouts have passed.
		var p []permission.PendingRequest
		for deadline := time.Now().Add(time.Minute); len(p) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			p = c.Broker.Pending()
		}
		if len(p) == 0 {
			t.Error("the await never waited for the person")
			return
		}
		time.Sleep(5 * time.Second)
		if _, err := c.Broker.Answer(context.Background(), p[0].ID, permission.Answer{Allow: false, By: permission.ByWindow, Interactive: true}); err != nil {
			t.Errorf("answer: %v", err)
		}
	}()
	got, out := runTask(t, c, tk.Name)
	t.Logf("run log:\n%s", out)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run %s (%s)", got.Status, got.Reason)
	}
	for _, what := range []string{"headers", "body"} {
		_, rest, ok := strings.Cut(out, "trickle "+what+" ")
		secs, err := strconv.ParseFloat(strings.Fields(rest + " x")[0], 64)
		if !ok || err != nil {
			t.Errorf("the probe did not say how long its trickled %s lasted", what)
			continue
		}
		// Trickled to its end it would last over 60 s.
		if secs > 20 {
			t.Errorf("the channel kept a request trickling its %s for %.1f s", what, secs)
		}
	}
	if !strings.Contains(out, "await 200 deny") {
		t.Error("the await that outlived the read timeouts did not get the person's answer")
	}
}
