package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// The escape suite: a hostile command in workspace-write with the network off
// tries every way out we know; the host side then checks nothing escaped. It
// runs as is on both Linux backends (bubblewrap and Landlock).

const python = "/usr/bin/python3"

type fixture struct {
	base, ws, out, home, xdg, outSock string
	policy                            Policy
	tcp                               *net.TCPListener
	udp, dns                          net.PacketConn
	unixL, airlockL, busL             *net.UnixListener
	hostSleep                         *exec.Cmd
	queueID                           string
	mark, hostname                    string
}

func newFixture(t *testing.T, mode string, network bool) *fixture {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "airlock-escape-")
	if err != nil {
		t.Fatal(err)
	}
	base, _ = filepath.EvalSymlinks(base)
	f := &fixture{base: base, ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside"), home: filepath.Join(base, "home"),
		xdg: filepath.Join(base, "xdg"), mark: fmt.Sprintf("%d%d", os.Getpid(), time.Now().UnixNano()%1e9)}
	t.Cleanup(func() { os.RemoveAll(base) })
	f.hostname, _ = os.Hostname()
	for _, d := range []string{f.ws, filepath.Join(f.ws, "sub"), f.out, f.home, filepath.Join(f.xdg, "airlock"), filepath.Join(f.xdg, "keyring"), filepath.Join(base, "usock")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	git := exec.Command("git", "init", "-q", f.ws)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(f.ws, "file.txt"), []byte("original\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "sub", "existing.txt"), []byte("original\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.out, "secret.txt"), []byte("secret\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, ".git", "hooks", "pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink(f.out, filepath.Join(f.ws, "escape-link")))

	env := map[string]string{"XDG_RUNTIME_DIR": f.xdg, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + filepath.Join(f.xdg, "bus")}
	f.policy, err = Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(env), Flags: Layer{Mode: &mode, Network: netp(network)}})
	if err != nil {
		t.Fatal(err)
	}

	f.tcp, err = net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	f.udp, err = net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	f.dns, err = net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	f.outSock = filepath.Join(base, "usock", "outside.sock")
	f.unixL = listenUnix(t, f.outSock)
	f.airlockL = listenUnix(t, filepath.Join(f.xdg, "airlock", "airlock.sock"))
	f.busL = listenUnix(t, filepath.Join(f.xdg, "bus"))
	f.hostSleep = exec.Command("sleep", "1000")
	must(t, f.hostSleep.Start())
	out, err := exec.Command("ipcmk", "-Q").Output()
	must(t, err)
	f.queueID = strings.TrimSpace(string(out[strings.LastIndexByte(string(out), ':')+1:]))
	t.Cleanup(func() {
		f.tcp.Close()
		f.udp.Close()
		f.dns.Close()
		f.unixL.Close()
		f.airlockL.Close()
		f.busL.Close()
		f.hostSleep.Process.Kill()
		f.hostSleep.Wait()
		exec.Command("ipcrm", "-q", f.queueID).Run()
	})
	return f
}

func listenUnix(t *testing.T, path string) *net.UnixListener {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	must(t, err)
	return l
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run executes a bash script in the fixture's sandbox.
func (f *fixture) run(t *testing.T, script string, mutate ...func(*ExecRequest)) (string, Result) {
	t.Helper()
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + f.home, "LANG=C.UTF-8",
		"WS=" + f.ws, "OUT=" + f.out, "XDG=" + f.xdg, "MARK=" + f.mark, "PY=" + python,
		"TCP_PORT=" + strconv.Itoa(f.tcp.Addr().(*net.TCPAddr).Port),
		"UDP_PORT=" + strconv.Itoa(f.udp.LocalAddr().(*net.UDPAddr).Port),
		"DNS_PORT=" + strconv.Itoa(f.dns.LocalAddr().(*net.UDPAddr).Port),
		"USOCK=" + f.outSock, "HOSTPID=" + strconv.Itoa(f.hostSleep.Process.Pid), "QID=" + f.queueID,
		"XDG_RUNTIME_DIR=" + f.xdg, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(f.xdg, "bus"),
		"GITHUB_TOKEN=ghp_secret", "AWS_SECRET_ACCESS_KEY=aws_secret", "MY_SERVICE_TOKEN=svc_secret", "DB_PASSWORD=db_secret",
	}
	var out bytes.Buffer
	req := ExecRequest{Policy: f.policy, Argv: []string{"/bin/bash", "-c", script}, Env: env, Stdout: &out, Stderr: &out, Timeout: 60 * time.Second}
	for _, m := range mutate {
		m(&req)
	}
	res, err := Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("Exec: %v (output %s)", err, out.String())
	}
	return out.String(), res
}

func (f *fixture) noneAccepted(t *testing.T) {
	t.Helper()
	for name, l := range map[string]interface {
		SetDeadline(time.Time) error
		Accept() (net.Conn, error)
	}{"tcp": f.tcp, "outside unix socket": f.unixL, "airlock socket": f.airlockL, "session bus": f.busL} {
		l.SetDeadline(time.Now().Add(100 * time.Millisecond))
		if c, err := l.Accept(); err == nil {
			c.Close()
			t.Errorf("ESCAPE: the sandbox connected to the host's %s", name)
		}
	}
	for name, pc := range map[string]net.PacketConn{"udp": f.udp, "dns": f.dns} {
		pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 512)
		if n, _, err := pc.ReadFrom(buf); err == nil {
			t.Errorf("ESCAPE: the host's %s server received %d bytes from the sandbox", name, n)
		}
	}
}

func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("ESCAPE: %s was created on the host", path)
	}
}

func content(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("ESCAPE: %s is gone from the host: %v", path, err)
		return
	}
	if string(b) != want {
		t.Errorf("ESCAPE: %s changed on the host: %q", path, b)
	}
}

func hostAlive(t *testing.T, pid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Errorf("ESCAPE: host process %d is gone", pid)
		return
	}
	s := string(b)
	state := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
	if state != "S" && state != "R" {
		t.Errorf("ESCAPE: host process %d is in state %s (killed or traced)", pid, state)
	}
}

func backends(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, be := range []string{BackendNameBwrap, BackendNameLandlock} {
		t.Run(be, func(t *testing.T) {
			if be == BackendNameBwrap && bwrapPath() == "" {
				t.Fatal("bubblewrap is not installed: the escape suite needs it (apt install bubblewrap)")
			}
			if be == BackendNameLandlock && landlockABI() < 1 {
				t.Fatal("Landlock is not available in this kernel: the escape suite needs it")
			}
			forcedBackend = be
			defer func() { forcedBackend = "" }()
			fn(t, be)
		})
	}
}

func TestEscapeSuite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: CI runs this suite as root, where a careless profile leaks every capability")
	}
	cases := []struct {
		name   string
		script string
		check  func(t *testing.T, f *fixture, out, backend string)
	}{
		{"write outside the workspace", `echo pwn > $OUT/new.txt; echo pwn >> $OUT/secret.txt; cp file.txt $OUT/copy.txt`,
			func(t *testing.T, f *fixture, out, _ string) {
				absent(t, filepath.Join(f.out, "new.txt"))
				absent(t, filepath.Join(f.out, "copy.txt"))
				content(t, filepath.Join(f.out, "secret.txt"), "secret\n")
			}},
		{"write in $HOME", `echo pwn > ~/.bashrc; mkdir -p ~/.ssh && echo key > ~/.ssh/authorized_keys`,
			func(t *testing.T, f *fixture, out, _ string) {
				absent(t, filepath.Join(f.home, ".bashrc"))
				absent(t, filepath.Join(f.home, ".ssh"))
			}},
		{"write in host /tmp and /dev/shm", `echo pwn > /tmp/airlock-escape-$MARK; echo pwn > /dev/shm/airlock-escape-$MARK`,
			func(t *testing.T, f *fixture, out, _ string) {
				absent(t, "/tmp/airlock-escape-"+f.mark)
				absent(t, "/dev/shm/airlock-escape-"+f.mark)
			}},
		{"write .git/config and hooks", `echo '[core] fsmonitor = pwn' >> .git/config; echo pwn > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; rm -f .git/hooks/pre-commit.sample; mv .git .git-moved`,
			func(t *testing.T, f *fixture, out, _ string) {
				b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
				if strings.Contains(string(b), "pwn") {
					t.Error("ESCAPE: .git/config was written")
				}
				absent(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit"))
				absent(t, filepath.Join(f.ws, ".git-moved"))
				content(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
			}},
		{"create .airlock for the first time", `mkdir .airlock; echo 'sandbox_mode="full-access"' > .airlock/policy.toml; mkdir -p sub/.airlock`,
			func(t *testing.T, f *fixture, out, _ string) {
				absent(t, filepath.Join(f.ws, ".airlock"))
			}},
		{"symlink escape", `echo pwn > escape-link/secret.txt; ln -s $OUT/secret.txt mylink; echo pwn > mylink; ln -sf $OUT sub/l2; echo pwn > sub/l2/new2.txt`,
			func(t *testing.T, f *fixture, out, _ string) {
				content(t, filepath.Join(f.out, "secret.txt"), "secret\n")
				absent(t, filepath.Join(f.out, "new2.txt"))
			}},
		{"hard link to an outside file", `ln $OUT/secret.txt sub/hard && echo pwn >> sub/hard; ln $OUT/secret.txt hard2 && echo pwn >> hard2`,
			func(t *testing.T, f *fixture, out, _ string) {
				content(t, filepath.Join(f.out, "secret.txt"), "secret\n")
			}},
		{"rename in and out", `mv $OUT/secret.txt sub/stolen.txt; mv sub/existing.txt $OUT/moved.txt`,
			func(t *testing.T, f *fixture, out, _ string) {
				content(t, filepath.Join(f.out, "secret.txt"), "secret\n")
				absent(t, filepath.Join(f.out, "moved.txt"))
			}},
		{"/proc/self/root", `echo pwn > /proc/self/root$OUT/procroot.txt; echo pwn > /proc/1/root$OUT/procroot2.txt`,
			func(t *testing.T, f *fixture, out, _ string) {
				absent(t, filepath.Join(f.out, "procroot.txt"))
				absent(t, filepath.Join(f.out, "procroot2.txt"))
			}},
		{"TCP, UDP and DNS to loopback", `$PY - <<'EOF'
` + pyLoopbackProbes + `EOF`,
			func(t *testing.T, f *fixture, out, _ string) {
				f.noneAccepted(t)
				// With the network on, names resolve (through the stack's DNS), but the
				// host's loopback stays out of reach.
				if strings.Contains(out, "tcp ok") || (!f.policy.Network.On() && strings.Contains(out, "resolve ok")) {
					t.Errorf("ESCAPE: network reachable:\n%s", out)
				}
			}},
		{"unix socket outside, Airlock socket, session bus", `$PY - <<'EOF'
import os, socket
for p in [os.environ["USOCK"], os.environ["XDG"] + "/airlock/airlock.sock", os.environ["XDG"] + "/bus"]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(p); print("connected", p)
    except Exception as e:
        print("denied", p, e)
print("keyring:", os.listdir(os.environ["XDG"] + "/keyring") if os.path.isdir(os.environ["XDG"] + "/keyring") else "absent")
EOF`,
			func(t *testing.T, f *fixture, out, _ string) {
				f.noneAccepted(t)
				if strings.Contains(out, "connected") {
					t.Errorf("ESCAPE: a host unix socket was reachable:\n%s", out)
				}
			}},
		{"ptrace and /proc/PID/mem of a host process", `$PY - <<'EOF'
import ctypes, os
pid = int(os.environ["HOSTPID"])
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace-attach", libc.ptrace(16, pid, 0, 0))
print("ptrace-seize", libc.ptrace(0x4206, pid, 0, 0))
try:
    open("/proc/%d/mem" % pid, "rb").read(1); print("mem ok")
except Exception as e:
    print("mem denied", e)
EOF`,
			func(t *testing.T, f *fixture, out, _ string) {
				hostAlive(t, f.hostSleep.Process.Pid)
				if !strings.Contains(out, "ptrace-attach -1") || !strings.Contains(out, "ptrace-seize -1") || !strings.Contains(out, "mem denied") {
					t.Errorf("ESCAPE: ptrace or /proc/PID/mem worked:\n%s", out)
				}
			}},
		{"kill a host process", `kill -9 $HOSTPID; kill -STOP $HOSTPID; $PY -c "import os; os.kill(int(os.environ['HOSTPID']), 9)"`,
			func(t *testing.T, f *fixture, out, _ string) {
				hostAlive(t, f.hostSleep.Process.Pid)
			}},
		{"mount, unshare, setuid", `mount -t tmpfs none sub && echo mount-ok; mount -o remount,rw / && echo remount-ok; umount $WS/.git && echo umount-ok;
unshare -U -r true && echo unshare-user-ok; unshare -m true && echo unshare-mount-ok; su root -c 'grep CapEff /proc/self/status; touch /etc/airlock-su-'$MARK;
touch /etc/airlock-pwn-$MARK; echo pwn >> .git/config`,
			func(t *testing.T, f *fixture, out, _ string) {
				for _, bad := range []string{"mount-ok", "remount-ok", "umount-ok", "unshare-user-ok", "unshare-mount-ok"} {
					if strings.Contains(out, bad) {
						t.Errorf("ESCAPE: %s:\n%s", bad, out)
					}
				}
				if strings.Contains(out, "CapEff:") && !strings.Contains(out, "CapEff:\t0000000000000000") {
					t.Errorf("ESCAPE: su regained capabilities:\n%s", out)
				}
				absent(t, "/etc/airlock-pwn-"+f.mark)
				absent(t, "/etc/airlock-su-"+f.mark)
				b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
				if strings.Contains(string(b), "pwn") {
					t.Error("ESCAPE: .git/config written after the mount attempts")
				}
			}},
		{"capabilities and no_new_privs", `grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status`,
			func(t *testing.T, f *fixture, out, _ string) {
				for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
					if !strings.Contains(out, want) {
						t.Errorf("ESCAPE: /proc/self/status lacks %q:\n%s", want, out)
					}
				}
			}},
		{"sethostname and host SysV IPC", `hostname airlock-pwned && echo hostname-ok; ipcrm -q $QID && echo ipcrm-ok; $PY -c "import socket; socket.sethostname('airlock-pwned2')" && echo sethostname-ok`,
			func(t *testing.T, f *fixture, out, _ string) {
				if h, _ := os.Hostname(); h != f.hostname {
					t.Errorf("ESCAPE: host hostname changed to %s", h)
				}
				if err := exec.Command("ipcs", "-q", "-i", f.queueID).Run(); err != nil {
					t.Errorf("ESCAPE: the host's message queue %s was removed", f.queueID)
				}
				if strings.Contains(out, "ipcrm-ok") {
					t.Errorf("ESCAPE: host SysV IPC reachable:\n%s", out)
				}
			}},
		{"credentials in the environment", `env`,
			func(t *testing.T, f *fixture, out, _ string) {
				for _, secret := range []string{"ghp_secret", "aws_secret", "svc_secret", "db_secret", "DBUS_SESSION_BUS_ADDRESS"} {
					if strings.Contains(out, secret) {
						t.Errorf("ESCAPE: %s visible in the sandbox's environment", secret)
					}
				}
			}},
		{"a background process outliving the command", `setsid nohup sleep 4242.$MARK >/dev/null 2>&1 & (sleep 4343.$MARK &) ; echo started`,
			func(t *testing.T, f *fixture, out, _ string) {
				for _, arg := range []string{"4242." + f.mark, "4343." + f.mark} {
					if pid := waitGone(arg); pid != 0 {
						t.Errorf("ESCAPE: sleep %s (pid %d) outlived the command", arg, pid)
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}},
	}
	backends(t, func(t *testing.T, backend string) {
		// Every probe holds with the network on as well: the run's own network
		// namespace (bubblewrap; Landlock refuses network-on runs, see
		// TestNetworkOnLandlockRefused).
		networks := []bool{false}
		if backend == BackendNameBwrap {
			networks = append(networks, true)
		}
		for _, network := range networks {
			t.Run(map[bool]string{false: "network off", true: "network on"}[network], func(t *testing.T) {
				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						f := newFixture(t, "workspace-write", network)
						out, _ := f.run(t, c.script)
						c.check(t, f, out, backend)
						if t.Failed() {
							t.Logf("sandbox output:\n%s", out)
						}
					})
				}
			})
		}
	})
}

// waitGone waits (bounded) for processes whose command line contains arg to
// disappear and returns the pid of one that did not (0: none left).
func waitGone(arg string) int {
	for range 50 {
		pid := findProcess(arg)
		if pid == 0 {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	return findProcess(arg)
}

func findProcess(arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(arg)) && !bytes.Contains(b, []byte("bash")) {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); bytes.Contains(st, []byte(") Z")) {
				continue // a zombie is dead
			}
			return pid
		}
	}
	return 0
}

// TestEscapeSuiteNetworkOn: with the network on, the run has a network namespace of its
// own: the host's loopback services (TCP and UDP), an abstract unix socket listening on
// the host, a unix socket by path in a directory the sandbox can read, the session bus
// and the core's socket under XDG_RUNTIME_DIR all stay out of reach. With the host's
// namespace (the old behaviour) the loopback services, the abstract socket and the
// socket by path were reachable.
func TestEscapeSuiteNetworkOn(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", true)
	abstractName := "@airlock-escape-" + f.mark
	abstractL := listenUnix(t, abstractName)
	defer abstractL.Close()
	realBus := sessionBusSocket() // the session bus of the desktop running the tests, if any
	out, res := f.run(t, `$PY - <<'PYEOF'
import os, socket
port = lambda n: int(os.environ[n])
def tcp(host="127.0.0.1"):
    return lambda: socket.create_connection((host, port("TCP_PORT")), timeout=2)
def udp(host="127.0.0.1"):
    return lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", (host, port("UDP_PORT")))
`+pyUnixProbe+`# 10.0.2.2 is the stack's gateway: it must not lead to the host's loopback.
probes = [("tcp", tcp()), ("udp", udp()), ("gateway tcp", tcp("10.0.2.2")), ("gateway udp", udp("10.0.2.2")),
    ("abstract", unix(os.environ["ABSTRACT"])),
    ("path", unix(os.environ["USOCK"])),
    ("core", unix(os.environ["XDG"] + "/airlock/airlock.sock")),
    ("bus", unix(os.environ["XDG"] + "/bus"))]
if os.environ.get("REALBUS"):
    probes.append(("session bus", unix(os.environ["REALBUS"])))
for what, fn in probes:
    try:
        fn(); print(what, "reached" if "udp" not in what else "sent (the host's server must not get it)")
    except Exception as e:
        print(what, "refused", e)
# Seccomp refuses AF_UNIX sockets outright, with the network on too.
try:
    socket.socket(socket.AF_UNIX); print("af_unix created")
except PermissionError as e:
    print("af_unix refused", e)
print(open("/etc/resolv.conf").read())
PYEOF
ip -4 -o addr show`, func(r *ExecRequest) { r.Env = append(r.Env, "ABSTRACT="+abstractName, "REALBUS="+realBus) })
	if res.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", res.ExitCode, out)
	}
	if strings.Contains(out, "reached") || strings.Contains(out, "af_unix created") {
		t.Errorf("ESCAPE: with the network on, a host service was reachable:\n%s", out)
	}
	f.noneAccepted(t)
	abstractL.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := abstractL.Accept(); err == nil {
		c.Close()
		t.Error("ESCAPE: the host's abstract unix socket accepted a connection from the sandbox")
	}
	if !strings.Contains(out, "nameserver "+sandboxDNS) || !strings.Contains(out, "inet 10.0.2.100/24") {
		t.Errorf("the run's namespace lacks the stack's address or DNS:\n%s", out)
	}
	if n := strings.Count(out, " inet "); n != 2 {
		t.Errorf("want lo and the stack's interface only, got %d addresses:\n%s", n, out)
	}
	if b, err := os.ReadFile("/etc/resolv.conf"); err == nil && strings.Contains(string(b), "written by Airlock") {
		t.Error("the host's /etc/resolv.conf was changed")
	}
	noStackLeft(t)
}

// TestNetworkOnReachesOutside: the run's own namespace connects out through the stack:
// a test server on a non-loopback address of this machine (as an outside host would be)
// is reached by curl, python's urllib, node's fetch and git over HTTP.
func TestNetworkOnReachesOutside(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", true)
	srv := filepath.Join(f.base, "srv")
	must(t, os.MkdirAll(srv, 0o755))
	must(t, os.WriteFile(filepath.Join(srv, "hello.txt"), []byte("hello-"+f.mark), 0o644))
	src := filepath.Join(f.base, "src")
	for _, args := range [][]string{
		{"init", "-q", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "x"},
		{"clone", "-q", "--bare", src, filepath.Join(srv, "repo.git")},
		{"-C", filepath.Join(srv, "repo.git"), "update-server-info"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	l := outsideListener(t, f)
	hs := &http.Server{Handler: http.FileServer(http.Dir(srv)), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(l)
	defer hs.Close()
	url := "http://" + l.Addr().String()
	// The first thing the command does: the stack must already be up (no race).
	script := `grep -q tap0: /proc/net/dev && echo stack-up-at-start
curl -sS -m 20 ` + url + `/hello.txt; echo " curl"
$PY -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1] + '/hello.txt', timeout=20).read().decode(), 'python')" ` + url + `
git ls-remote ` + url + `/repo.git | grep -q refs/heads/ && echo git-ok
if command -v node >/dev/null; then node -e "fetch(process.argv[1] + '/hello.txt').then(r => r.text()).then(t => console.log(t, 'node'))" ` + url + `; else echo "hello-$MARK node (not installed)"; fi`
	out, res := f.run(t, script)
	for _, want := range []string{"stack-up-at-start", "hello-" + f.mark + " curl", "hello-" + f.mark + " python", "git-ok", "hello-" + f.mark + " node"} {
		if !strings.Contains(out, want) {
			t.Errorf("network on: %q missing (exit %d):\n%s", want, res.ExitCode, out)
		}
	}
	noStackLeft(t)
}

// TestNetworkOnDNS: a query to the stack's DNS forwarder (the resolv.conf the sandbox
// sees) gets the answer the host's resolver gives (checked when the host's resolver
// answers at all).
func TestNetworkOnDNS(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	const query = `import socket, sys
q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
s.sendto(q, (sys.argv[1], 53))
try:
    d, _ = s.recvfrom(512); print("rcode", d[3] & 15)
except Exception as e:
    print("no answer", e)`
	b, err := os.ReadFile("/etc/resolv.conf")
	must(t, err)
	server := ""
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" && server == "" {
			server = f[1]
		}
	}
	if server == "" {
		t.Skip("the host's resolv.conf names no nameserver")
	}
	host, _ := exec.Command(python, "-c", query, server).CombinedOutput()
	if !strings.HasPrefix(string(host), "rcode") {
		t.Skipf("the host's resolver %s does not answer (%s): nothing to compare with", server, bytes.TrimSpace(host))
	}
	f := newFixture(t, "workspace-write", true)
	out, _ := f.run(t, `$PY -c '`+query+`' $(awk '$1 == "nameserver" {print $2; exit}' /etc/resolv.conf)`)
	if strings.TrimSpace(out) != strings.TrimSpace(string(host)) {
		t.Errorf("DNS through the stack = %q, the host's resolver says %q", out, host)
	}
}

// TestNetworkOnCommandWaitsForStack: the command starts only once the stack is up, even
// when the stack is slow to start (slirp4netns behind a wrapper that sleeps first).
func TestNetworkOnCommandWaitsForStack(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	slow := filepath.Join(t.TempDir(), "slow-slirp4netns")
	must(t, os.WriteFile(slow, []byte("#!/bin/sh\nsleep 0.5\nexec "+slirpPath()+" \"$@\"\n"), 0o755))
	slirpOverride = slow
	defer func() { slirpOverride = "" }()
	f := newFixture(t, "workspace-write", true)
	var out bytes.Buffer
	res, err := Exec(context.Background(), ExecRequest{Policy: f.policy, Argv: []string{"/bin/grep", "-c", "tap0:", "/proc/net/dev"}, Stdout: &out, Stderr: &out})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(out.String()) != "1" {
		t.Errorf("the command ran before its network was up: %+v %v:\n%s", res, err, out.String())
	}
	noStackLeft(t)
}

// TestNetworkOnLandlockRefused: Landlock has no network namespace to give: a network-on
// run is refused (exit 125) with the way out, never run in the host's namespace.
func TestNetworkOnLandlockRefused(t *testing.T) {
	if landlockABI() < 1 {
		t.Fatal("Landlock is not available in this kernel")
	}
	forcedBackend = BackendNameLandlock
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", true)
	marker := filepath.Join(f.ws, "ran")
	_, err := Exec(context.Background(), ExecRequest{Policy: f.policy, Argv: []string{"/usr/bin/touch", marker}})
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Code != ExitSandboxFailed || !errors.Is(err, ErrNetworkNeedsNamespace) || !strings.Contains(err.Error(), "apt install bubblewrap slirp4netns") {
		t.Errorf("network on under Landlock = %v; want exit %d and ErrNetworkNeedsNamespace", err, ExitSandboxFailed)
	}
	absent(t, marker)
}

// TestNetworkOnWithoutStackFailsClosed: without slirp4netns a network-on run is refused
// with the fix, and the command never runs (no fall back to the host's namespace).
func TestNetworkOnWithoutStackFailsClosed(t *testing.T) {
	if bwrapPath() == "" {
		t.Fatal("bubblewrap is not installed (apt install bubblewrap)")
	}
	slirpOverride = "/nonexistent/slirp4netns"
	defer func() { slirpOverride = "" }()
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", true)
	marker := filepath.Join(f.ws, "ran")
	for _, be := range []string{"", BackendNameBwrap} { // auto must not fall back to Landlock either
		forcedBackend = be
		_, err := Exec(context.Background(), ExecRequest{Policy: f.policy, Argv: []string{"/usr/bin/touch", marker}})
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Code != ExitSandboxFailed || !errors.Is(err, ErrNoNetworkStack) || !strings.Contains(err.Error(), "apt install slirp4netns") {
			t.Errorf("backend %q without slirp4netns = %v; want exit %d naming the fix", be, err, ExitSandboxFailed)
		}
	}
	absent(t, marker)
}

// TestNetworkStackDiesWithAirlock: the stack never outlives a kill -9 of the process
// that started it (this test binary, re-run as a helper, plays airlock), nor does the
// sandboxed command.
func TestNetworkStackDiesWithAirlock(t *testing.T) {
	if mark := os.Getenv("AIRLOCK_TEST_NETSTACK_HELPER"); mark != "" {
		forcedBackend = BackendNameBwrap
		mode, network := "workspace-write", NetworkOn
		cwd, _ := os.Getwd()
		p, err := Resolve(Inputs{Cwd: cwd, Env: envMap(nil), Flags: Layer{Mode: &mode, Network: &network}})
		must(t, err)
		_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"sleep", "4848." + mark}})
		t.Fatalf("the helper's sandbox ended: %v", err)
	}
	requireNetStack(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	helper := exec.Command(os.Args[0], "-test.run=^TestNetworkStackDiesWithAirlock$", "-test.count=1")
	helper.Dir = dir
	mark := strconv.Itoa(os.Getpid())
	helper.Env = append(os.Environ(), "AIRLOCK_TEST_NETSTACK_HELPER="+mark)
	must(t, helper.Start())
	defer helper.Process.Kill()
	stack := 0
	for range 1000 { // the sleep runs once the stack is up (bwrap's command line names it before)
		if stack = childNamed(helper.Process.Pid, "slirp4netns"); stack != 0 && childNamed(0, "sleep", "4848."+mark) != 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stack == 0 {
		t.Fatal("the helper's sandbox never ran with its network stack")
	}
	must(t, helper.Process.Signal(syscall.SIGKILL))
	helper.Wait()
	for i := 0; i < 300 && processAlive(stack); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if processAlive(stack) {
		syscall.Kill(stack, syscall.SIGKILL)
		t.Errorf("slirp4netns (pid %d) outlived a kill -9 of the process that started it", stack)
	}
	// An exiting process (state R, its memory gone) may linger briefly: wait, bounded.
	for i := 0; i < 500 && childNamed(0, "sleep", "4848."+mark) != 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if pid := childNamed(0, "sleep", "4848."+mark); pid != 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the sandboxed command (pid %d) outlived a kill -9 of airlock", pid)
	}
}

func requireNetStack(t *testing.T) {
	t.Helper()
	if bwrapPath() == "" {
		t.Fatal("bubblewrap is not installed (apt install bubblewrap)")
	}
	if slirpPath() == "" {
		t.Fatal("slirp4netns is not installed: the network-on tests need it (apt install slirp4netns)")
	}
}

// outsideListener listens on a host outside this machine (egresstest.NewOutside, as
// root), which a sandbox with the network on reaches through its stack. Without root it
// is this machine's own address, with allow_local set in f's policy so that the stack's
// way out is still tested.
func outsideListener(t *testing.T, f *fixture) net.Listener {
	t.Helper()
	if os.Geteuid() == 0 {
		ln, _ := egresstest.NewOutside(t).Listen(t, "tcp")
		return ln
	}
	lists := DefaultNetworkLists()
	if f.policy.Allowlist != nil {
		lists = *f.policy.Allowlist
	}
	lists.AllowLocal = true
	f.policy.Allowlist = &lists
	l, err := net.Listen("tcp", net.JoinHostPort(egresstest.OwnAddress(t), "0"))
	must(t, err)
	return l
}

// noStackLeft: no slirp4netns started by this process is still running once its run
// is over (killed at the run's end; its exit, the tap device's teardown, may take a
// moment: bounded wait).
func noStackLeft(t *testing.T) {
	t.Helper()
	pid := childNamed(os.Getpid(), "slirp4netns")
	for i := 0; i < 300 && pid != 0; i++ {
		time.Sleep(10 * time.Millisecond)
		pid = childNamed(os.Getpid(), "slirp4netns")
	}
	if pid != 0 {
		t.Errorf("slirp4netns (pid %d) outlived its run", pid)
	}
}

// childNamed returns a live child of parent (0: any parent) whose command is name, with
// arg among its arguments if given (0: none).
func childNamed(parent int, name string, arg ...string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if lp < 0 || rp < lp {
			continue
		}
		fields := strings.Fields(s[rp+1:])
		if len(fields) < 2 || s[lp+1:rp] != name || fields[0] == "Z" || (parent != 0 && fields[1] != strconv.Itoa(parent)) {
			continue
		}
		if len(arg) > 0 {
			cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if !bytes.Contains(cl, []byte("\x00"+arg[0]+"\x00")) {
				continue
			}
		}
		return pid
	}
	return 0
}

func processAlive(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(st, []byte(") Z"))
}

func TestSandboxKeepsWorking(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		out, res := f.run(t, `set -e
echo new > sub/new.txt
echo more >> file.txt
cat /etc/passwd >/dev/null && cat $OUT/secret.txt
(cd sub && git status --short >/dev/null && echo git-ok)
$PY -c "
import multiprocessing as m
p = m.Process(target=print, args=('mp-process-ok',)); p.start(); p.join()
"
echo devnull > /dev/null && echo devnull-ok
$PY -c "
import os, pty
pid, fd = pty.fork()
if pid == 0:
    os.write(1, b'pty-child %r\\n' % os.isatty(0)); os._exit(0)
data = b''
while True:
    try:
        chunk = os.read(fd, 100)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
print(data.decode().strip()); os.waitpid(pid, 0)
"
echo top > top-level.txt 2>/dev/null && echo top-level-ok || echo top-level-refused
$PY -c "
import multiprocessing as m
with m.Pool(2) as p: print('mp-pool', sum(p.map(abs, [-1, -2])))
" 2>/dev/null || echo mp-pool-failed
`)
		if res.ExitCode != 0 {
			t.Fatalf("exit %d:\n%s", res.ExitCode, out)
		}
		for _, want := range []string{"secret", "git-ok", "mp-process-ok", "devnull-ok", "pty-child True"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		content(t, filepath.Join(f.ws, "sub", "new.txt"), "new\n")
		content(t, filepath.Join(f.ws, "file.txt"), "original\nmore\n")
		switch backend {
		case BackendNameBwrap:
			if !strings.Contains(out, "top-level-ok") || !strings.Contains(out, "mp-pool 3") {
				t.Errorf("bwrap: top-level write or multiprocessing pool failed:\n%s", out)
			}
		case BackendNameLandlock:
			// Documented in Status.Limitations for Landlock.
			if !strings.Contains(out, "top-level-refused") || !strings.Contains(out, "mp-pool-failed") {
				t.Errorf("landlock: the documented limitations do not match:\n%s", out)
			}
			absent(t, filepath.Join(f.ws, "top-level.txt"))
		}
		if res.Backend != backend {
			t.Errorf("Result.Backend = %s, want %s", res.Backend, backend)
		}
	})
}

func TestModesReadOnlyAndFullAccess(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "read-only", false)
		out, _ := f.run(t, `echo x > file.txt; echo y > sub/new.txt; mkdir d; rm sub/existing.txt; echo z > $OUT/ro.txt; echo done`)
		content(t, filepath.Join(f.ws, "file.txt"), "original\n")
		content(t, filepath.Join(f.ws, "sub", "existing.txt"), "original\n")
		absent(t, filepath.Join(f.ws, "sub", "new.txt"))
		absent(t, filepath.Join(f.ws, "d"))
		absent(t, filepath.Join(f.out, "ro.txt"))
		if !strings.Contains(out, "done") {
			t.Errorf("read-only run failed:\n%s", out)
		}

		full := newFixture(t, "full-access", false)
		_, res := full.run(t, `echo x > $OUT/full.txt && echo y >> .git/config`)
		content(t, filepath.Join(full.out, "full.txt"), "x\n")
		if res.Backend != BackendNameNone {
			t.Errorf("full-access backend = %s", res.Backend)
		}
	})
}

func TestCreateGitFirstTime(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		base, _ := filepath.EvalSymlinks(t.TempDir())
		ws := filepath.Join(base, "fresh")
		must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
		p, err := Resolve(Inputs{Cwd: ws, Env: envMap(nil)})
		must(t, err)
		var out bytes.Buffer
		_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/sh", "-c", "git init -q .; mkdir .git; echo ref > .git/HEAD; echo 'gitdir: /tmp/x' > .git; echo ok > sub/f"},
			Stdout: &out, Stderr: &out})
		must(t, err)
		absent(t, filepath.Join(ws, ".git"))
		absent(t, filepath.Join(ws, ".airlock"))
		content(t, filepath.Join(ws, "sub", "f"), "ok\n")
	})
}

func TestProtectedSymlinkFailsClosed(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		base, _ := filepath.EvalSymlinks(t.TempDir())
		ws := filepath.Join(base, "ws")
		must(t, os.MkdirAll(filepath.Join(base, "realgit"), 0o755))
		must(t, os.MkdirAll(ws, 0o755))
		must(t, os.Symlink(filepath.Join(base, "realgit"), filepath.Join(ws, ".git")))
		p, err := Resolve(Inputs{Cwd: ws, Env: envMap(nil)})
		must(t, err)
		_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
		var pse *ProtectedSymlinkError
		if !errors.As(err, &pse) || !strings.Contains(err.Error(), ".git") {
			t.Fatalf("Exec with a symlinked .git = %v, want a ProtectedSymlinkError", err)
		}
	})
}

func TestTimeoutKillsTree(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		out, res := f.run(t, `sleep 4444.$MARK & setsid sleep 4545.$MARK & sleep 4646.$MARK`, func(r *ExecRequest) { r.Timeout = 500 * time.Millisecond })
		if !res.TimedOut {
			t.Errorf("TimedOut = false (res %+v):\n%s", res, out)
		}
		for _, arg := range []string{"4444.", "4545.", "4646."} {
			if pid := waitGone(arg + f.mark); pid != 0 {
				t.Errorf("ESCAPE: sleep %s survived the timeout", arg)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func TestSandboxedPeer(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		started := make(chan int, 1)
		type verdict struct{ root, inner int }
		result := make(chan verdict, 1)
		go func() {
			root := <-started
			for range 300 {
				if pid := findProcess("4747." + f.mark); pid != 0 {
					result <- verdict{root, pid}
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			result <- verdict{root, 0}
		}()
		var v verdict
		f.run(t, `sleep 4747.$MARK & wait`, func(r *ExecRequest) {
			r.OnStart = func(pid int) {
				started <- pid
				v = <-result
				if v.inner != 0 {
					if !IsSandboxedPeer(v.inner, []int{v.root}) {
						t.Errorf("a process inside the sandbox (pid %d) is not recognised (root %d)", v.inner, v.root)
					}
					syscall.Kill(v.inner, syscall.SIGKILL)
				}
			}
			r.Timeout = 5 * time.Second
		})
		if v.inner == 0 {
			t.Fatal("the sandboxed sleep was never seen")
		}
		known := []int{v.root}
		if IsSandboxedPeer(os.Getpid(), known) || IsSandboxedPeer(f.hostSleep.Process.Pid, known) {
			t.Error("a host process counted as sandboxed")
		}
		if !IsSandboxedPeer(999999999, known) {
			t.Error("an uninspectable pid must count as sandboxed (fail closed)")
		}
	})
}

func TestExecFallbacks(t *testing.T) {
	p, _ := testPolicy(t, "workspace-write", false)
	forcedBackend = forcedNone
	defer func() { forcedBackend = "" }()
	res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
	if err != nil || res.Backend != BackendNameApp || !strings.HasPrefix(res.Warning, "WARNING") {
		t.Errorf("auto without an OS backend = %+v, %v; want the application layer with a loud warning", res, err)
	}
	p.Backend = BackendOS
	_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Code != ExitSandboxFailed || !errors.Is(err, ErrNoOSBackend) || !strings.Contains(err.Error(), "apt install bubblewrap") {
		t.Errorf("backend os without an OS backend = %v", err)
	}
	forcedBackend = ""
	_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"no-such-command-airlock"}})
	if !errors.As(err, &ee) || ee.Code != ExitNotFound {
		t.Errorf("missing command = %v, want exit code %d", err, ExitNotFound)
	}
	vm := p
	vm.ExecutionMode = ExecSandbox
	if _, err := Exec(context.Background(), ExecRequest{Policy: vm, Argv: []string{"/bin/true"}}); !errors.As(err, &ee) || !strings.Contains(err.Error(), "micro-VM") {
		t.Errorf("execution_mode sandbox = %v, want a refusal (it must not silently run on the host)", err)
	}
	res, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"sh", "-c", "exit 7"}})
	if err != nil || res.ExitCode != 7 {
		t.Errorf("exit code = %+v %v, want 7", res, err)
	}
	res, _ = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"sh", "-c", "kill -TERM $$"}})
	if res.ExitCode != 128+15 {
		t.Errorf("killed by signal = %+v", res)
	}
}

// TestGitStatusFromSubdirectory runs with the working directory (the writable
// root) inside a repository: .git is above it, and the empty read-only
// placeholder that keeps sub/.git from being created must not confuse git.
func TestGitStatusFromSubdirectory(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		sub := filepath.Join(f.ws, "sub")
		p, err := Resolve(Inputs{Cwd: sub, Env: envMap(nil)})
		must(t, err)
		var out bytes.Buffer
		res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/sh", "-c", "git status --short && git rev-parse --show-toplevel && (echo x > made-here.txt) 2>/dev/null; exit 0"},
			Stdout: &out, Stderr: &out})
		must(t, err)
		if res.ExitCode != 0 || !strings.Contains(out.String(), f.ws+"\n") {
			t.Fatalf("git status in a subdirectory: exit %d:\n%s", res.ExitCode, out.String())
		}
		absent(t, filepath.Join(sub, ".git"))
		if backend == BackendNameBwrap {
			content(t, filepath.Join(sub, "made-here.txt"), "x\n")
		}
	})
}

// TestConcurrentSandboxesKeepPlaceholders: when two sandboxes share a
// directory, the one that created the .airlock placeholder and ends first must
// not remove it while the other still relies on it.
func TestConcurrentSandboxesKeepPlaceholders(t *testing.T) {
	if bwrapPath() == "" {
		t.Fatal("bubblewrap is not installed (apt install bubblewrap)")
	}
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	p, err := Resolve(Inputs{Cwd: ws, Env: envMap(nil)})
	must(t, err)
	start := func(script string, out *bytes.Buffer) (<-chan struct{}, <-chan error) {
		started, done := make(chan struct{}), make(chan error, 1)
		go func() {
			_, err := Exec(context.Background(), ExecRequest{Policy: p, Stdout: out, Stderr: out, Timeout: 20 * time.Second,
				Argv: []string{"/bin/sh", "-c", script}, OnStart: func(int) { close(started) }})
			done <- err
		}()
		return started, done
	}
	var outA, outB bytes.Buffer
	startedA, doneA := start("while [ ! -e sub/a-go ]; do sleep 0.02; done", &outA)
	<-startedA
	for range 500 { // A's placeholder exists once its sandbox is up
		if _, err := os.Stat(filepath.Join(ws, ".airlock")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	startedB, doneB := start("touch sub/b-ready; while [ ! -e sub/b-go ]; do sleep 0.02; done; mkdir .airlock/x && echo created-inside; rmdir .airlock && mkdir .airlock && echo recreated", &outB)
	<-startedB
	for range 500 {
		if _, err := os.Stat(filepath.Join(ws, "sub", "b-ready")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	must(t, os.WriteFile(filepath.Join(ws, "sub", "a-go"), nil, 0o644))
	must(t, <-doneA)
	must(t, os.WriteFile(filepath.Join(ws, "sub", "b-go"), nil, 0o644))
	must(t, <-doneB)
	if strings.Contains(outB.String(), "created-inside") || strings.Contains(outB.String(), "recreated") {
		t.Errorf("ESCAPE: .airlock became writable after the other sandbox ended:\n%s", outB.String())
	}
	absent(t, filepath.Join(ws, ".airlock"))
}

func TestGrantedCredentialReachesTheSandbox(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		out, _ := f.run(t, `env`, func(r *ExecRequest) { r.GrantEnv = []string{"GITHUB_TOKEN"} })
		if !strings.Contains(out, "GITHUB_TOKEN=ghp_secret") {
			t.Errorf("granted GITHUB_TOKEN missing:\n%s", out)
		}
		for _, secret := range []string{"aws_secret", "svc_secret", "db_secret", innerStageEnv} {
			if strings.Contains(out, secret) {
				t.Errorf("%s visible although not granted", secret)
			}
		}
	})
}

// TestReadOnlyDirectoryAsWorkingDirectory: workspace-write in a directory the
// user cannot write must still run (there is nothing to protect there). Only
// meaningful for a non-root user: root can write every directory here.
func TestReadOnlyDirectoryAsWorkingDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write /usr/share; run as a normal user to exercise this")
	}
	p, err := Resolve(Inputs{Cwd: "/usr/share", Env: envMap(nil)})
	must(t, err)
	res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec in a read-only directory = %+v, %v", res, err)
	}
}

// TestCredentialsHidden attacks the credential files of $HOME from a bubblewrap sandbox:
// straight reads, through a symlink planted in the workspace, through `..`, and through
// /proc/self/root. None may return a byte of them; the application layer refuses the read
// with a reason that names the file.
// TestCredentialsHidden reads the credentials every way an agent would, under bwrap (mounts
// over them) and under Landlock (no rule reaches them: the fallback where user namespaces
// are blocked, e.g. Ubuntu 24.04's AppArmor restriction).
func TestCredentialsHidden(t *testing.T) {
	backends(t, credentialsHidden)
}

func credentialsHidden(t *testing.T, backend string) {
	f := newFixture(t, "workspace-write", false)
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----SECRET"
	for rel, body := range map[string]string{
		".ssh/id_ed25519": key, ".aws/credentials": "aws_secret_key_SECRET", ".netrc": "machine x password SECRET",
		".config/gcloud/credentials.db": "SECRET", ".docker/config.json": `{"auths":{"x":{"auth":"SECRET"}}}`,
	} {
		p := filepath.Join(f.home, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(body), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(f.home, "notes.txt"), []byte("readable\n"), 0o644))
	must(t, os.Symlink(filepath.Join(f.home, ".ssh", "id_ed25519"), filepath.Join(f.ws, "key-link")))
	must(t, os.Symlink(filepath.Join(f.home, ".ssh"), filepath.Join(f.ws, "ssh-link")))
	// The policy was resolved before the files existed; resolve again as a run would.
	mode, network := "workspace-write", false
	env := map[string]string{"XDG_RUNTIME_DIR": f.xdg}
	pol, err := Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(env), Flags: Layer{Mode: &mode, Network: netp(network)}})
	must(t, err)
	f.policy = pol

	out, _ := f.run(t, `cat ~/.ssh/id_ed25519; cat key-link; cat ssh-link/id_ed25519; cat $WS/../home/.ssh/id_ed25519;
cat /proc/self/root$HOME/.ssh/id_ed25519; ls -la ~/.ssh; cat ~/.aws/credentials ~/.netrc ~/.config/gcloud/credentials.db ~/.docker/config.json;
cp -r ~/.ssh ./stolen 2>&1; cat stolen/* 2>&1; cat ~/notes.txt`)
	if strings.Contains(out, "SECRET") {
		t.Fatalf("ESCAPE: a credential was read inside the sandbox:\n%s", out)
	}
	if !strings.Contains(out, "readable") {
		t.Fatalf("an ordinary file in $HOME should stay readable:\n%s", out)
	}

	for _, p := range []string{filepath.Join(f.home, ".ssh", "id_ed25519"), filepath.Join(f.ws, "key-link"), filepath.Join(f.ws, "..", "home", ".aws", "credentials")} {
		err := pol.CheckRead(p)
		if d, ok := IsDenied(err); !ok || !strings.Contains(d.Error(), "credentials") {
			t.Errorf("CheckRead(%s) = %v; want a denial saying it holds credentials", p, err)
		}
	}
	if err := pol.CheckRead(filepath.Join(f.home, "notes.txt")); err != nil {
		t.Errorf("CheckRead(~/notes.txt) = %v; want allowed", err)
	}
}

// pyLoopbackProbes is a python script that tries the host's loopback services (TCP, UDP,
// DNS, on the fixture's ports) and name resolution, printing "<probe> ok" or
// "<probe> denied <error>" for each.
const pyLoopbackProbes = `import os, socket
port = lambda n: int(os.environ[n])
for what, fn in [
` + pyProbeTCP + pyProbeUDP + `    ("dns", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01", ("127.0.0.1", port("DNS_PORT")))),
    ("resolve", lambda: socket.getaddrinfo("example.com", 80)),
]:
    try:
        fn(); print(what, "ok")
    except Exception as e:
        print(what, "denied", e)
`

// The probes of the host's loopback TCP and UDP services, as entries of a python list of
// (name, function) pairs.
const (
	pyProbeTCP = `    ("tcp", lambda: socket.create_connection(("127.0.0.1", port("TCP_PORT")), timeout=2)),
`
	pyProbeUDP = `    ("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port("UDP_PORT")))),
`
)

// sessionBusSocket is the socket of the session bus the tests run under
// (DBUS_SESSION_BUS_ADDRESS): a path, or an abstract name written with a leading @; ""
// when there is none.
func sessionBusSocket() string {
	bus := ""
	for _, part := range strings.Split(strings.TrimPrefix(os.Getenv("DBUS_SESSION_BUS_ADDRESS"), "unix:"), ",") {
		if v, ok := strings.CutPrefix(part, "path="); ok {
			bus = v
		} else if v, ok := strings.CutPrefix(part, "abstract="); ok {
			bus = "@" + v
		}
	}
	return bus
}

// pyUnixProbe defines unix(path), a python probe that connects to a unix socket by path,
// or by abstract name written with a leading @.
const pyUnixProbe = `def unix(path):
    if path.startswith("@"):
        path = "\0" + path[1:]
    def f():
        s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(path)
    return f
`
