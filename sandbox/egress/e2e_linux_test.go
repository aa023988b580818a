//go:build linux

package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// sandbox is a real bubblewrap sandbox with a network namespace of its own.
type sandbox struct {
	cmd   *exec.Cmd
	pid   int // the sandbox's pid 1, as the host sees it
	stdin io.WriteCloser
	out   *strings.Builder
	mu    sync.Mutex
}

func startSandbox(t *testing.T, dir, script string) *sandbox {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed (apt install bubblewrap)")
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer infoR.Close()
	cmd := exec.Command(bwrap, "--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--ro-bind", dir, dir,
		"--info-fd", "3", "--", "/bin/bash", "-c", script)
	cmd.ExtraFiles = []*os.File{infoW}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"}
	sb := &sandbox{cmd: cmd, out: &strings.Builder{}}
	cmd.Stdout = lockedWriter{sb}
	cmd.Stderr = lockedWriter{sb}
	sb.stdin, err = cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	infoW.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPID == 0 {
		t.Fatalf("bwrap --info-fd: %v (output %s)", err, sb.output())
	}
	sb.pid = info.ChildPID
	return sb
}

type lockedWriter struct{ sb *sandbox }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.sb.mu.Lock()
	defer w.sb.mu.Unlock()
	return w.sb.out.Write(p)
}

func (sb *sandbox) output() string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.out.String()
}

// sections splits "== name" blocks of the sandbox's output.
func sections(out string) map[string]string {
	m := map[string]string{}
	var cur string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "== "); ok {
			cur = name
			continue
		}
		m[cur] += sc.Text() + "\n"
	}
	return m
}

const pythonGet = `
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
op = urllib.request.build_opener(urllib.request.ProxyHandler({"https": "http://127.0.0.1:3128"}), urllib.request.HTTPSHandler(context=ctx))
try:
    print(op.open(sys.argv[1], timeout=60).read().decode())
except Exception as e:
    print("ERR", type(e).__name__, e)
`

// TestSandboxEndToEnd: curl and python inside a real --unshare-net sandbox reach an
// allowed server only through the proxy listening in the sandbox's own namespace; a
// denied name, a name resolving to 127.0.0.1 and a denied unknown one are refused; an
// unknown one waits on Decide and proceeds once allowed; going around the proxy gets
// nothing. The servers listen on this machine's loopback; the proxy sees them as a
// TEST-NET address (the test's resolver and dialer), so allow_local stays false and
// the local-address check is the real one.
func TestSandboxEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"allowed.test", "ask.test", "ask-deny.test", "py-ask.test", "denied.test", "local.test"}
	cert, _, pemBytes := testCert(t, names...)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "get.py")
	if err := os.WriteFile(py, []byte(pythonGet), 0o644); err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "reached %s%s\n", r.Host, r.URL.Path) })
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(h)
	defer plain.Close()

	answers := map[string][][]netip.Addr{"local.test": {addrs("127.0.0.1")}}
	for _, n := range names[:5] {
		answers[n] = [][]netip.Addr{addrs(publicIP)}
	}
	rec := newRecorder()
	var asked sync.Map
	p, err := New(Config{
		Allowed:  []string{"allowed.test", "local.test"},
		Denied:   []string{"denied.test"},
		Resolver: &fakeResolver{answers: answers},
		Dial: (&routedDialer{routes: map[string]string{
			publicIP + ":443": tlsSrv.Listener.Addr().String(), publicIP + ":80": plain.Listener.Addr().String(),
		}}).Dial,
		Log: rec.Log,
		Decide: func(_ context.Context, r Request) (Verdict, error) {
			asked.Store(r.Domain, true)
			if r.Domain == "ask.test" {
				return Allow, nil
			}
			return Deny, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	script := `read go
P=http://127.0.0.1:3128
CA=` + ca + `
r() { echo "== $1"; shift; "$@" 2>&1; echo "rc=$?"; }
r connect curl -sS --cacert $CA --proxy $P https://allowed.test/connect
r env env HTTPS_PROXY=$P curl -sS --cacert $CA https://allowed.test/env
r socks env ALL_PROXY=socks5h://127.0.0.1:3128 curl -sS --cacert $CA https://allowed.test/socks
r plain env http_proxy=$P curl -sS http://allowed.test/plain
r python /usr/bin/python3 ` + py + ` https://allowed.test/python $CA
r denied curl -sS --cacert $CA --proxy $P https://denied.test/
r socks-denied env ALL_PROXY=socks5h://127.0.0.1:3128 curl -sS --cacert $CA https://denied.test/
r local curl -sS --cacert $CA --proxy $P https://local.test/
r ask-allow curl -sS --cacert $CA --proxy $P https://ask.test/asked
r ask-deny curl -sS --cacert $CA --proxy $P https://ask-deny.test/
r python-deny /usr/bin/python3 ` + py + ` https://py-ask.test/ $CA
r direct curl -sS --max-time 10 --noproxy '*' --cacert $CA https://allowed.test/
r direct-ip curl -sS --max-time 10 --noproxy '*' http://` + publicIP + `/
echo "== end"
`
	sb := startSandbox(t, dir, script)
	if os.Geteuid() != 0 {
		// What ListenInNetns works around: an ordinary user cannot setns into it.
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", sb.pid))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := listenBySetns(f, "127.0.0.1:3129"); !errors.Is(err, unix.EPERM) {
			t.Errorf("as uid %d, direct setns gave %v, want EPERM (the helper path is then untested)", os.Geteuid(), err)
		}
		f.Close()
	}
	ln, err := ListenInNetns(sb.pid, "127.0.0.1:3128")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Serve(ctx, ln) }()
	// The listener is in the sandbox's namespace, not ours.
	if c, err := net.Dial("tcp", "127.0.0.1:3128"); err == nil {
		c.Close()
		t.Log("note: something in the host namespace listens on 127.0.0.1:3128 too")
	}
	io.WriteString(sb.stdin, "go\n")
	if err := sb.cmd.Wait(); err != nil {
		t.Fatalf("sandbox: %v\n%s", err, sb.output())
	}
	out := sb.output()
	got := sections(out)
	t.Logf("uid %d, sandbox output:\n%s", os.Geteuid(), out)
	want := map[string][]string{
		"connect":      {"reached allowed.test/connect", "rc=0"},
		"env":          {"reached allowed.test/env", "rc=0"},
		"socks":        {"reached allowed.test/socks", "rc=0"},
		"plain":        {"reached allowed.test/plain", "rc=0"},
		"python":       {"reached allowed.test/python"},
		"denied":       {"403"},
		"socks-denied": {"denied.test. (2)"}, // reply 2: connection not allowed by ruleset
		"local":        {"403"},
		"ask-allow":    {"reached ask.test/asked", "rc=0"},
		"ask-deny":     {"403"},
		"python-deny":  {"ERR", "403"},
	}
	for name, subs := range want {
		for _, s := range subs {
			if !strings.Contains(got[name], s) {
				t.Errorf("%s: %q lacks %q", name, got[name], s)
			}
		}
	}
	for _, name := range []string{"denied", "socks-denied", "local", "ask-deny", "direct", "direct-ip"} {
		if strings.Contains(got[name], "rc=0") || strings.Contains(got[name], "reached") {
			t.Errorf("%s got through: %q", name, got[name])
		}
	}
	for _, d := range []string{"ask.test", "ask-deny.test", "py-ask.test"} {
		if _, ok := asked.Load(d); !ok {
			t.Errorf("Decide was not asked about %s", d)
		}
	}
	if _, ok := asked.Load("denied.test"); ok {
		t.Error("Decide was asked about a denied domain")
	}
	if r := rec.wait(t, "local.test"); r.Reason != ReasonLocalAddress || r.IP.String() != "127.0.0.1" {
		t.Errorf("local.test record %+v", r)
	}
	if r := rec.wait(t, "allowed.test"); r.Verdict != Allow || r.BytesDown == 0 {
		t.Errorf("allowed.test record %+v", r)
	}
}

// TestSandboxEndToEndUnprivileged runs TestSandboxEndToEnd again as an ordinary user
// (nobody), where ListenInNetns must take the helper path.
func TestSandboxEndToEndUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs as root, to drop to nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "egress-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "egress.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		bin, "-test.run=^TestSandboxEndToEnd$", "-test.v", "-test.count=1")
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp", "TMPDIR=/tmp"}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSandboxEndToEnd") || !strings.Contains(string(out), "uid 65534") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
