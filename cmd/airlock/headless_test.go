package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headlessInstance is an instance in a CI-like session: no D-Bus session bus (no
// DBUS_SESSION_BUS_ADDRESS, a runtime directory without a bus socket), its home under
// /var/tmp so that a sandbox would see its data directory unless it hides it (/tmp is
// private inside the sandbox, which would hide it for the wrong reason).
func headlessInstance(t *testing.T) *instance {
	t.Helper()
	if _, err := os.Stat(filepath.Join("/run/user", strconv.Itoa(os.Getuid()), "bus")); err == nil {
		t.Skip("a session bus socket exists in /run/user: a D-Bus-less session cannot be made here")
	}
	base, err := os.MkdirTemp("/var/tmp", "airlock-headless-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	runtime := filepath.Join(base, "run")
	os.MkdirAll(runtime, 0o700)
	in := newInstance(t)
	in.home = filepath.Join(base, "home")
	in.env = append(in.env, "DBUS_SESSION_BUS_ADDRESS=", "XDG_RUNTIME_DIR="+runtime)
	return in
}

// copyExample copies an example of ops/testdata into a fresh directory under /var/tmp.
func copyExample(t *testing.T, example string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "airlock-example-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "ops", "testdata", example))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// commitConfirmFromTheCLI runs the commit-confirm example (its rollback window set to
// window seconds; change, when set, is the file committed instead of firewall.conf)
// against the fake router, through the daemon: plan, diff, approve typed at a terminal,
// apply, verify. It returns the router's directory, verify's answer and the plan's
// journal events (the journal verified).
func (in *instance) commitConfirmFromTheCLI(password string, window int, change string) (string, map[string]any, string) {
	t := in.t
	t.Helper()
	dev := copyExample(t, "vyos-commit-confirm")
	router := exec.Command("./fakevyos", "device")
	router.Dir = dev
	if err := router.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Process.Kill(); router.Wait() })
	planFile := filepath.Join(dev, "plan.json")
	b, _ := os.ReadFile(planFile)
	n := strconv.Itoa(window)
	os.WriteFile(planFile, []byte(strings.NewReplacer(`"commit-confirm", "2"`, `"commit-confirm", "`+n+`"`,
		`"confirm_within_seconds": 2`, `"confirm_within_seconds": `+n).Replace(string(b))), 0o644)
	if change != "" {
		b, _ := os.ReadFile(filepath.Join(dev, change))
		os.WriteFile(filepath.Join(dev, "firewall.conf"), b, 0o644)
	}

	js := func(args ...string) map[string]any { t.Helper(); return in.jsonIn(dev, args...) }
	plan := js("ops", "plan", "--file", planFile)
	id, hash := plan["id"].(string), plan["hash"].(string)
	js("ops", "diff", id, "--run")
	if show, _, _ := in.run("ops", "show", id); !strings.Contains(show, "confirm  ./fakevyos confirm (commit-confirm: sent by the first verify only when every assertion passes within "+n+"s") {
		t.Fatalf("ops show does not show the confirm step:\n%s", show)
	}
	out := in.onTTY(hash[:8]+"\n"+password+"\n", "ops", "approve", id)
	if !strings.Contains(out, "confirm   ./fakevyos confirm") {
		t.Fatalf("the approval does not show the confirm step:\n%s", out)
	}
	i := strings.Index(out, "token: ")
	if i < 0 {
		t.Fatalf("no token printed:\n%s", out)
	}
	token := strings.Fields(out[i+len("token: "):])[0]
	if applied := js("ops", "apply", id, "--token", token); applied["status"] != "applied" {
		t.Fatalf("apply: %v", applied)
	}
	// The router took the commit on probation (with a short window it may already have
	// rolled it back: its log says which).
	if log, _ := os.ReadFile(filepath.Join(dev, "device.log")); !strings.HasPrefix(string(log), "committed, rollback in "+n+"s unless confirmed\n") {
		t.Fatalf("the router did not take the commit-confirm: %q", log)
	}
	v := js("ops", "verify", id)
	j := js("ops", "journal", "--plan", id, "--verify")
	if j["verification"].(map[string]any)["ok"] != true {
		t.Fatalf("journal: %v", j)
	}
	var events []string
	for _, e := range j["entries"].([]any) {
		events = append(events, e.(map[string]any)["event"].(string))
	}
	return dev, v, strings.Join(events, ",")
}

// TestOpsHeadlessCommitConfirmRollsBack: the failed outcome from the CLI, under the
// file store with no D-Bus: the change locks management out, an assertion fails, verify
// withholds the confirm and says why, and the router rolls back by itself.
func TestOpsHeadlessCommitConfirmRollsBack(t *testing.T) {
	in := headlessInstance(t)
	password := in.pamProof("[secrets]\nstore = \"file\"\n")
	in.startDaemon()
	// The window outlasts the CLI calls up to verify on a loaded machine: a router that
	// rolled back before verify looked would pass the assertions and end with another reason.
	dev, v, events := in.commitConfirmFromTheCLI(password, 5, "firewall-lockout.conf")
	c := v["confirm"].(map[string]any)
	if v["status"] != "verify_failed" || c["outcome"] != "confirm_withheld" || !strings.Contains(c["reason"].(string), "an assertion failed") {
		t.Fatalf("verify: %v", v)
	}
	if events != "planned,diff_attached,approved,apply_started,apply_finished,verify_failed,confirm_withheld" {
		t.Fatalf("journal events: %s", events)
	}
	want, _ := os.ReadFile(filepath.Join("..", "..", "ops", "testdata", "vyos-commit-confirm", "running.conf"))
	// The router restores running.conf, then logs it: wait for both.
	const rolledBack = "committed, rollback in 5s unless confirmed\nrolled back: no confirm in time\n"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, _ := os.ReadFile(filepath.Join(dev, "running.conf"))
		log, _ := os.ReadFile(filepath.Join(dev, "device.log"))
		if string(got) == string(want) && string(log) == rolledBack {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the router did not roll back: %q\n%s", got, log)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dev, "device.log")); string(log) != rolledBack {
		t.Fatalf("router log: %q", log)
	}
	// The CLI's words for it.
	if out, _, _ := in.run("ops", "journal", "--plan", v["plan_id"].(string)); !strings.Contains(out, "confirm_withheld") {
		t.Fatalf("journal:\n%s", out)
	}
}

// TestOpsHeadlessKeyringWithoutDBusNamesTheFileStore: with the default keyring store
// and no session bus, `airlock ops plan` fails saying how to get out (a Secret Service,
// or `[secrets] store = "file"`), and `airlock status` says the same.
func TestOpsHeadlessKeyringWithoutDBusNamesTheFileStore(t *testing.T) {
	in := headlessInstance(t)
	in.startDaemon()
	dev := copyExample(t, "vyos-commit-confirm")
	_, stderr, code := in.run("ops", "plan", "--file", filepath.Join(dev, "plan.json"))
	if code == 0 {
		t.Fatal("ops plan journaled without a journal key")
	}
	for _, want := range []string{"no D-Bus session bus", "gnome-keyring-daemon", "[secrets]", `store = "file"`, "config.toml"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("ops plan's error lacks %q:\n%s", want, stderr)
		}
	}
	out, _, _ := in.run("status")
	if !strings.Contains(out, "keyring store UNAVAILABLE") || !strings.Contains(out, `store = "file"`) {
		t.Fatalf("status does not say the keyring is unavailable and how to get out:\n%s", out)
	}
	// The way out offered exists: the file store, chosen in config.toml, works (below).
	if _, err := os.Stat(filepath.Join(in.home, "data", "secrets")); !os.IsNotExist(err) {
		t.Fatalf("a file store was created without being chosen: %v", err)
	}
}

// TestOpsHeadlessFileStore: in a session with no D-Bus, under `[secrets] store = "file"`,
// the commit-confirm example runs plan → diff → approve (typed at a terminal) → apply →
// verify → confirm through the daemon against the fake router, the journal verifies,
// the store's file and directory are 0600 and 0700, `airlock status` names the store,
// and a sandboxed command cannot read the file.
func TestOpsHeadlessFileStore(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := headlessInstance(t)
	// The rule lets the MCP bash calls below run without a person; the sandbox still decides what they see.
	password := in.pamProof("[secrets]\nstore = \"file\"\n\n[[permission.rules]]\ntool = \"bash\"\npattern = \"cat *\"\naction = \"allow\"\n")
	in.startDaemon()
	// A window no slow machine outlasts: the confirmed outcome must not depend on timing.
	dev, v, events := in.commitConfirmFromTheCLI(password, 600, "")
	if v["status"] != "verified" || v["confirm"].(map[string]any)["outcome"] != "confirmed" {
		t.Fatalf("verify: %v", v)
	}
	if log, _ := os.ReadFile(filepath.Join(dev, "device.log")); string(log) != "committed, rollback in 600s unless confirmed\nconfirmed\n" {
		t.Fatalf("router log: %q", log)
	}
	if events != "planned,diff_attached,approved,apply_started,apply_finished,verified,confirmed" {
		t.Fatalf("journal events: %s", events)
	}

	// The store: a 0700 directory under the data directory, a 0600 file holding the key.
	dir := filepath.Join(in.home, "data", "secrets")
	file := filepath.Join(dir, "secrets.json")
	for path, want := range map[string]os.FileMode{dir: 0o700, file: 0o600} {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %04o", path, fi.Mode(), err, want)
		}
	}
	var stored map[string]string
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &stored); err != nil || stored["ops.journal-hmac-key"] == "" {
		t.Fatalf("the journal key is not in the file store: %v %s", err, data)
	}
	st, _ := in.status()
	kr := st["keyring"].(map[string]any)
	if kr["store"] != "file" || kr["where"] != file || kr["ok"] != true {
		t.Fatalf("status --json keyring: %v", kr)
	}
	if text, _, _ := in.run("status"); !strings.Contains(text, "file store, ok ("+file+")") {
		t.Fatalf("status does not name the file store:\n%s", text)
	}

	// `airlock secret set` writes where the core reads: the same file.
	c := in.cmd("secret", "set", "db.password")
	c.Stdin = strings.NewReader("s3cret-value\n")
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "stored db.password in "+file) {
		t.Fatalf("secret set: %v %s", err, out)
	}

	// A sandboxed command sees neither the file nor, through a symlink, its bytes.
	ws, err := os.MkdirTemp("/var/tmp", "airlock-headless-ws-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	os.Symlink(file, filepath.Join(ws, "innocent.json"))
	os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("plain text\n"), 0o644)
	// Control: the sandbox runs, and reads what it may.
	if out, stderr, code := in.run("exec", "--cwd", ws, "--", "cat", "plain.txt"); code != 0 || out != "plain text\n" {
		t.Fatalf("sandboxed cat of a plain file: exit %d %q %s", code, out, stderr)
	}
	for _, argv := range [][]string{{"cat", file}, {"cat", "innocent.json"}, {"ls", "-la", dir}} {
		out, stderr, code := in.run(append([]string{"exec", "--cwd", ws, "--"}, argv...)...)
		if code == 0 || strings.Contains(out, "s3cret-value") || strings.Contains(out, stored["ops.journal-hmac-key"]) || strings.Contains(out, "secrets.json") {
			t.Fatalf("sandboxed %v read the store: exit %d\n%s%s", argv, code, out, stderr)
		}
		t.Logf("sandboxed %v: exit %d %s", argv, code, strings.TrimSpace(stderr))
	}
	// The same through the MCP server's bash tool, as an agent calls it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	server := in.cmd("mcp", "--cwd", ws)
	server.Path, server.Args[0] = withAgent, withAgent // the MCP server runs its tools through airlock-agent
	var serverLog strings.Builder
	server.Stderr = &serverLog
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "headless-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatalf("airlock mcp: %v\n%s", err, serverLog.String())
	}
	defer cs.Close()
	bash := func(command string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatalf("bash %q: %v", command, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if got := bash("cat plain.txt"); !strings.Contains(got, "plain text") {
		t.Fatalf("MCP bash control: %s", got)
	}
	for _, command := range []string{"cat " + file, "cat innocent.json"} {
		if got := bash(command); strings.Contains(got, "s3cret-value") || strings.Contains(got, stored["ops.journal-hmac-key"]) {
			t.Fatalf("MCP bash %q read the store:\n%s", command, got)
		} else {
			t.Logf("MCP bash %q: %s", command, strings.TrimSpace(got))
		}
	}
	// The same command outside the sandbox does read it: the refusals above are the sandbox's.
	if b, err := exec.Command("cat", filepath.Join(ws, "innocent.json")).Output(); err != nil || !strings.Contains(string(b), "s3cret-value") {
		t.Fatalf("control read: %v", err)
	}
}

// TestDaemonTCPTokenFromTheFileStore: `airlock daemon --tcp` in a session with no D-Bus,
// under `[secrets] store = "file"`, starts, and its bearer token is the file store's
// api.token: the listener's token is read before the rest of the configuration is open,
// and must come from the store config.toml chooses, not the keyring.
func TestDaemonTCPTokenFromTheFileStore(t *testing.T) {
	in := headlessInstance(t)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), "[secrets]\nstore = \"file\"\n")
	addr := freeLoopback(t)
	in.checkTCPListener(addr, "daemon", "--tcp", addr)
}

// TestDaemonTCPAddressFromTheConfig: config.toml's [api] tcp_address makes the core
// listen there without --tcp, guarded by the same token; an address another program
// holds stops the start with the way out naming that key.
func TestDaemonTCPAddressFromTheConfig(t *testing.T) {
	in := headlessInstance(t)
	addr := freeLoopback(t)
	config := filepath.Join(in.home, "config", "config.toml")
	in.writeFile(config, fmt.Sprintf("[secrets]\nstore = \"file\"\n\n[api]\ntcp_address = %q\n", addr))
	in.checkTCPListener(addr, "daemon")

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	in.writeFile(config, fmt.Sprintf("[secrets]\nstore = \"file\"\n\n[api]\ntcp_address = %q\n", busy.Addr().String()))
	_, stderr, code := in.run("daemon")
	if code == 0 || !strings.Contains(stderr, "another program listens on "+busy.Addr().String()) || !strings.Contains(stderr, "[api] tcp_address in "+config) {
		t.Fatalf("a daemon on a busy configured address: exit %d\n%s", code, stderr)
	}
}

// freeLoopback is a loopback TCP address nothing listens on (just now).
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// checkTCPListener starts `airlock args...` (a daemon under the file store) and checks
// that it listens on addr with the file store's api.token as its bearer token, and
// refuses a request without it.
func (in *instance) checkTCPListener(addr string, args ...string) {
	t := in.t
	t.Helper()
	d := in.cmd(args...)
	var out strings.Builder
	d.Stdout, d.Stderr = &out, &out
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	var stored map[string]string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(in.home, "data", "secrets", "secrets.json"))
		if json.Unmarshal(b, &stored) == nil && stored["api.token"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never kept its API token in the file store:\n%s", out.String())
		}
	}
	get := func(token string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/status", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return http.DefaultClient.Do(req)
	}
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err = get(stored["api.token"]); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the TCP listener: %v\n%s", err, out.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/status with the file store's token: %s", resp.Status)
	}
	if resp, err := get(""); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/status without a token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// `airlock status` says where the loopback listener is, and what chose it.
	if status, stderr, code := in.run("status"); code != 0 || !strings.Contains(status, "tcp") || !strings.Contains(status, addr+" (loopback, bearer token required; chosen by ") {
		t.Errorf("airlock status does not show the TCP listener: exit %d\n%s%s", code, status, stderr)
	}
}

// TestRunSecretFromTheFileStore: under `[secrets] store = "file"` with no D-Bus, a
// scheduled run given a secret by name (`task add --secret`) gets the value `airlock
// secret set` stored in the file, and its log shows it only redacted.
func TestRunSecretFromTheFileStore(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := headlessInstance(t)
	ws := vartmp.Dir(t, "airlock-headless-run-")
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[secrets]\nstore = \"file\"\n\n[workspace]\nroots = [%q]\n", ws))
	in.startDaemon()
	value := fmt.Sprintf("run-secret-%d", time.Now().UnixNano())
	set := in.cmd("secret", "set", "RUN_TOKEN")
	set.Stdin = strings.NewReader(value + "\n")
	if out, err := set.CombinedOutput(); err != nil || !strings.Contains(string(out), filepath.Join(in.home, "data", "secrets")) {
		t.Fatalf("secret set: %v %s", err, out)
	}
	if _, stderr, code := in.run("task", "add", "--name", "uses-secret", "--cwd", ws, "--secret", "RUN_TOKEN", "--",
		"sh", "-c", `echo "token=$RUN_TOKEN"; printf %s "$RUN_TOKEN" | sha256sum`); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "uses-secret"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	log := in.succeededRunLog("uses-secret")
	sum := sha256.Sum256([]byte(value))
	if !strings.Contains(log, hex.EncodeToString(sum[:])) {
		t.Errorf("the run did not get the file store's value:\n%s", log)
	}
	if strings.Contains(log, value) || !strings.Contains(log, "token=[REDACTED]") {
		t.Errorf("the run's log does not hide the secret:\n%s", log)
	}
}

// TestFileStoreHardLinkReadsNothing: a hard link to the secrets file store (and one to
// the database) left in a workspace is another name the sandbox's mounts do not hide.
// Read through `airlock exec`, a scheduled run, and an agent's MCP bash and read_file,
// it shows nothing: every sandbox refuses to start while a hidden file has a second
// name, naming it and the fix, and the store itself refuses the file (status says so)
// until the link is gone. Before, `airlock exec -- cat hard.json` printed every secret.
func TestFileStoreHardLinkReadsNothing(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := headlessInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-hardlink-ws-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n\n[secrets]\nstore = \"file\"\n\n"+
		"[[permission.rules]]\ntool = \"bash\"\npattern = \"cat *\"\naction = \"allow\"\n", ws))
	in.startDaemon()
	c := in.cmd("secret", "set", "db.password")
	c.Stdin = strings.NewReader("s3cret-linked\n")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("secret set: %v %s", err, out)
	}
	file := filepath.Join(in.home, "data", "secrets", "secrets.json")
	os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("plain text\n"), 0o644)
	if out, stderr, code := in.run("exec", "--cwd", ws, "--", "cat", "plain.txt"); code != 0 || out != "plain text\n" {
		t.Fatalf("control: exit %d %q %s", code, out, stderr)
	}
	if err := os.Link(file, filepath.Join(ws, "hard.json")); err != nil {
		t.Fatal(err)
	}
	if db := filepath.Join(in.home, "data", "airlock.db"); fileExists(db) {
		if err := os.Link(db, filepath.Join(ws, "hard.db")); err != nil {
			t.Fatal(err)
		}
	}
	leaked := func(s string) bool {
		return strings.Contains(s, "s3cret-linked") || strings.Contains(s, "SQLite format")
	}

	out, stderr, code := in.run("exec", "--cwd", ws, "--", "sh", "-c", "cat hard.json hard.db")
	if code == 0 || leaked(out) || !strings.Contains(stderr, "hard links") || !strings.Contains(stderr, "find / -xdev -samefile") {
		t.Errorf("ESCAPE? airlock exec through a hard link: exit %d\n%s%s", code, out, stderr)
	}

	// A scheduled run.
	if _, stderr, code := in.run("task", "add", "--name", "peek", "--cwd", ws, "--", "sh", "-c", "cat hard.json hard.db"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "peek"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := in.run("runs", "list", "--json", "--task", "peek")
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && runs[0]["status"] != "running" && runs[0]["status"] != "queued" {
			log, _, _ := in.run("runs", "logs", fmt.Sprint(runs[0]["id"]))
			if runs[0]["status"] == "succeeded" || leaked(log) || leaked(out) || !strings.Contains(out+log, "hard links") {
				t.Errorf("ESCAPE? a scheduled run through a hard link: %s\n%s", out, log)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %s", out)
		}
	}

	// An agent's MCP tools.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	server := in.cmd("mcp", "--cwd", ws)
	server.Path, server.Args[0] = withAgent, withAgent
	var serverLog strings.Builder
	server.Stderr = &serverLog
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hardlink-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatalf("airlock mcp: %v\n%s", err, serverLog.String())
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	for _, got := range []string{
		call("bash", map[string]any{"command": "cat hard.json"}),
		call("read_file", map[string]any{"path": filepath.Join(ws, "hard.json")}),
	} {
		if leaked(got) {
			t.Errorf("ESCAPE: an MCP tool read the store through a hard link:\n%s", got)
		}
		t.Logf("MCP: %s", strings.TrimSpace(got))
	}

	// The store refuses the file while it has a second name, and says how to fix it.
	if text, _, _ := in.run("status"); !strings.Contains(text, "hard links") {
		t.Errorf("status does not say the store has a second name:\n%s", text)
	}
	// Once the links are gone, everything runs again.
	os.Remove(filepath.Join(ws, "hard.json"))
	os.Remove(filepath.Join(ws, "hard.db"))
	if out, stderr, code := in.run("exec", "--cwd", ws, "--", "cat", "plain.txt"); code != 0 || out != "plain text\n" {
		t.Errorf("with the links gone: exit %d %q %s", code, out, stderr)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
