package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// pamProof gives the instance a PAM service of its own in /etc/pam.d whose stack asks
// for the password through the core's PAM conversation (pam_exec with expose_authtok)
// and accepts only the returned one; config.toml names it. The daemon runs as root here,
// whose password is not the test's to set. Call before startDaemon.
func (in *instance) pamProof(extra string) string {
	in.t.Helper()
	if os.Geteuid() != 0 {
		in.t.Skip("installing a PAM service for the test needs root")
	}
	var b [6]byte
	rand.Read(b[:])
	service := "airlock-test-" + hex.EncodeToString(b[:])
	password := "pw-" + hex.EncodeToString(b[:3]) + " with spaces"
	dir := in.t.TempDir()
	os.WriteFile(filepath.Join(dir, "password"), []byte(password), 0o600)
	check := filepath.Join(dir, "check")
	// pam_exec writes the password PAM got from the conversation to stdin, NUL-ended.
	script := "#!/bin/bash\nIFS= read -r -d '' pw || true\n[ \"$pw\" = \"$(cat " + filepath.Join(dir, "password") + ")\" ]\n"
	if err := os.WriteFile(check, []byte(script), 0o700); err != nil {
		in.t.Fatal(err)
	}
	stack := "auth required pam_exec.so expose_authtok quiet " + check + "\naccount required pam_permit.so\n"
	path := filepath.Join("/etc/pam.d", service)
	if err := os.WriteFile(path, []byte(stack), 0o644); err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() { os.Remove(path) })
	in.writeConfig("[approvals]\npam_service = \"" + service + "\"\n" + extra)
	return password
}

func (in *instance) writeConfig(config string) {
	in.t.Helper()
	os.MkdirAll(filepath.Join(in.home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(in.home, "config", "config.toml"), []byte(config), 0o600); err != nil {
		in.t.Fatal(err)
	}
}

// fakeTerminals are the ways a process gets a terminal without a person: each runs the
// real CLI with args on a pseudo-terminal and types typed into it.
func (in *instance) fakeTerminals(typed string, args ...string) map[string]*exec.Cmd {
	cmdline := binary
	for _, a := range args {
		cmdline += " '" + a + "'"
	}
	cmds := map[string]*exec.Cmd{
		"script -qc":       exec.Command("sh", "-c", "printf '%s' \"$0\" | script -qec \"$1\" /dev/null", typed, cmdline),
		"python pty.spawn": exec.Command("python3", append([]string{"-c", "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)", binary}, args...)...),
		"setsid + openpty": exec.Command("python3", append([]string{"-c", ptyScript, "", typed, binary}, args...)...),
	}
	cmds["python pty.spawn"].Stdin = strings.NewReader(typed)
	for _, c := range cmds {
		c.Env = append(os.Environ(), "AIRLOCK_HOME="+in.home)
	}
	return cmds
}

// A terminal is not a person: script -qc, python's pty.spawn and setsid + openpty all
// get one, type what the old CLI asked for (the id's prefix, which `approvals list`
// hands out) and answer nothing. The person, typing their login password at a terminal,
// answers; the core records it as cli-os-proof.
func TestFakeTerminalsAnswerNothing(t *testing.T) {
	in := newInstance(t)
	password := in.pamProof("")
	in.startDaemon()
	ws := t.TempDir()
	decided := in.awaitOverAPI(`{"tool":"bash","params":{"command":"rm -rf ~"},"context":{"cwd":"` + ws + `","session":"s1"}}`)
	id := in.waitPending(1)[0]["id"].(string)
	for name, c := range in.fakeTerminals(id[:8]+"\n", "approvals", "allow", id) {
		out, err := c.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not accepted") {
			t.Fatalf("%s answered (or failed for another reason): %v\n%s", name, err, out)
		}
		if list := in.waitPending(1); list[0]["id"] != id {
			t.Fatalf("%s: pending %v", name, list)
		}
	}
	// The person types the password at the prompt, and it is not echoed.
	res := in.typeAtPrompt("Type your login password", password+"\n", "approvals", "allow", id)
	if d := <-decided; d["verdict"] != "allow" || d["answered_by"] != "cli-os-proof" {
		t.Fatalf("decision %v\n%s", d, res)
	}
	if strings.Contains(res, password) {
		t.Fatalf("the password was echoed: %s", res)
	}
	// A fake terminal typing the name where the password goes gets no authorization of
	// the home directory either.
	home, _ := os.UserHomeDir()
	for name, c := range in.fakeTerminals(filepath.Base(home)+"\n"+filepath.Base(home)+"\n", "authorize", home, "--confirm-home") {
		if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "not accepted") {
			t.Fatalf("%s: authorize the home directory: %v %s", name, err, out)
		}
	}
	out, _, _ := in.run("places", "list", "--json")
	if strings.Contains(out, `"`+home+`"`) {
		t.Fatalf("the home directory was authorized: %s", out)
	}
}

// typeAtPrompt runs the CLI on a new pseudo-terminal (its controlling terminal), waits
// for prompt in what it prints, types input, and returns everything it printed.
func (in *instance) typeAtPrompt(prompt, input string, args ...string) string {
	in.t.Helper()
	c := exec.Command("python3", append([]string{"-c", ptyScript, prompt, input, binary}, args...)...)
	c.Env = append(os.Environ(), "AIRLOCK_HOME="+in.home)
	out, err := c.CombinedOutput()
	if err != nil {
		in.t.Fatalf("%v at a terminal: %v\n%s", args, err, out)
	}
	return string(out)
}

// The status says which proof is in force and which PAM service checks it; "tty" is
// named as the weaker choice.
func TestStatusNamesTheTerminalProof(t *testing.T) {
	in := newInstance(t)
	in.writeConfig("[approvals]\nterminal_proof = \"tty\"\n")
	in.startDaemon()
	out, _, _ := in.run("status", "--json")
	var st map[string]any
	json.Unmarshal([]byte(out), &st)
	if s := setting(st, "approvals.terminal_proof"); s == nil || s["value"] != "tty" {
		t.Fatalf("status: %v", s)
	}
	human, _, _ := in.run("status")
	if !strings.Contains(human, "terminal proof") || !strings.Contains(human, "weaker") {
		t.Fatalf("status does not name the weaker proof:\n%s", human)
	}
}

// A task that runs with full access is approved by the person: without a terminal the
// CLI refuses, a curl to the API is refused, and the login password at a terminal
// creates it.
func TestFullAccessTaskNeedsThePerson(t *testing.T) {
	in := newInstance(t)
	password := in.pamProof("")
	in.startDaemon()
	dir := t.TempDir()
	c := in.cmd("task", "add", "--name", "wide", "--cwd", dir, "--sandbox", "full-access", "--", "true")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "needs a person") {
		t.Fatalf("full-access task without a terminal: %v %s", err, out)
	}
	raw, _ := exec.Command("curl", "-s", "--unix-socket", filepath.Join(in.home, "run", "airlock.sock"), "-X", "POST", "http://airlock/v1/tasks",
		"-d", `{"name":"wide","argv":["true"],"cwd":"`+dir+`","overrides":{"sandbox_mode":"full-access","approval_policy":"never"}}`).Output()
	if !strings.Contains(string(raw), "not_interactive") || !strings.Contains(string(raw), "login password") {
		t.Fatalf("full-access task over the API: %s", raw)
	}
	out := in.typeAtPrompt("Type your login password", password+"\n", "task", "add", "--name", "wide", "--cwd", dir, "--sandbox", "full-access", "--", "true")
	if !strings.Contains(out, "task       wide") {
		t.Fatalf("full-access task with the password:\n%s", out)
	}
}

// ptyScript runs argv[3:] on a new pseudo-terminal that is its controlling terminal and
// types argv[2] on it once argv[1] has been printed (at once when argv[1] is empty),
// printing everything the command wrote and exiting with its status.
const ptyScript = `
import os, pty, sys, subprocess, fcntl, termios
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[3:], stdin=s, stdout=s, stderr=s, start_new_session=True,
                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
os.close(s)
out, typed = b"", not sys.argv[1]
if typed:
    os.write(m, sys.argv[2].encode())
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
    if not typed and sys.argv[1].encode() in out:
        os.write(m, sys.argv[2].encode())
        typed = True
sys.stdout.buffer.write(out)
sys.exit(p.wait())
`

// confirmWaiting is the person confirming, at a terminal with their password, the
// change of config.toml that waits (a change that loosens the answer path): it waits
// until the core has read the file and says what waits, confirms, and waits until it
// is in force.
func (in *instance) confirmWaiting(password string) {
	in.t.Helper()
	waiting := func(st map[string]any) bool { return st["config"].(map[string]any)["pending"] != nil }
	in.waitStatus(waiting)
	out := in.onTTY(password+"\n", "config", "confirm")
	if !strings.Contains(out, "Confirmed") {
		in.t.Fatalf("airlock config confirm:\n%s", out)
	}
	in.waitStatus(func(st map[string]any) bool { return !waiting(st) })
}

// approvalsSection is the [approvals] table pamProof wrote, to keep under a rewrite of
// config.toml (changing the PAM service is itself a change that waits).
func (in *instance) approvalsSection() string {
	in.t.Helper()
	b, err := os.ReadFile(filepath.Join(in.home, "config", "config.toml"))
	if err != nil {
		in.t.Fatal(err)
	}
	s := string(b)
	if i := strings.Index(s, "[approvals]"); i >= 0 {
		return s[i:]
	}
	return ""
}
