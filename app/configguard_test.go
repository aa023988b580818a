package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/secrets"
	"github.com/airlock-app/airlock/permission"
)

// forgedTerminalAnswer answers request id as a same-user script would: curl on the
// core's socket under script(1), which gives it a controlling terminal.
func forgedTerminalAnswer(t *testing.T, c *Core, id, body string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
	}
	curl := fmt.Sprintf("curl -s --unix-socket %s -H 'Content-Type: application/json' -d '%s' http://airlock/v1/approvals/%s/answer", c.Paths.Socket, body, id)
	out, err := exec.Command("script", "-qec", curl, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v %s", err, out)
	}
	return string(out)
}

// A same-user script that writes terminal_proof = "tty" into config.toml does not
// downgrade the proof: the reload holds the key at "os" until the person confirms it,
// so a forged terminal still answers nothing; `airlock status` (the config view) says
// what waits and names the command. Once the person confirms in the window the change
// is in force; tightening it back takes effect at once.
func TestLooserProofInConfigWaitsForThePerson(t *testing.T) {
	c, hc := apiCore(t, "approval_policy = \"untrusted\"\n")
	ws := t.TempDir()
	id, _ := pending(t, c, bashReq("rm -rf ~", ws))

	writeConfig(t, c, "approval_policy = \"untrusted\"\n[approvals]\nterminal_proof = \"tty\"\n")
	if got := c.terminalProof(); got != proofOS {
		t.Fatalf("the reloaded file downgraded the proof to %q", got)
	}
	v := c.ConfigView()
	if v.Pending == nil || !strings.Contains(strings.Join(v.Pending.Keys, ","), "approvals.terminal_proof") ||
		!strings.Contains(v.Pending.Message, "airlock config confirm") || !strings.Contains(v.Pending.Message, "Airlock window") {
		t.Fatalf("nothing says what waits: %+v", v.Pending)
	}
	out := forgedTerminalAnswer(t, c, id, `{"allow":true,"confirmation":"`+id[:8]+`"}`)
	if !strings.Contains(out, "not_proven") || !stillPending(c, id) {
		t.Fatalf("a forged terminal answered under a file-written tty proof: %s", out)
	}
	// The API cannot confirm it without proof.
	if code, m := post(t, hc, "/v1/config/confirm", `{}`); code != http.StatusForbidden || !strings.Contains(fmt.Sprint(m["hint"]), "airlock config confirm") {
		t.Fatalf("confirm over the API without proof: %d %v", code, m)
	}
	if code, m := post(t, hc, "/v1/config/confirm", `{"confirmation":"yes"}`); code != http.StatusForbidden {
		t.Fatalf("confirm with a typed confirmation under os: %d %v", code, m)
	}
	if c.terminalProof() != proofOS {
		t.Fatal("a refused confirmation changed the proof")
	}
	// The person confirms in the window.
	if _, err := c.ConfirmConfig(WindowCaller(), v.Pending.Digest); err != nil {
		t.Fatal(err)
	}
	if c.terminalProof() != proofTTY || c.ConfigView().Pending != nil {
		t.Fatalf("the confirmed change is not in force: %s %+v", c.terminalProof(), c.ConfigView().Pending)
	}
	// The harness's attack works once the person chose tty: the test attacks for real.
	out = forgedTerminalAnswer(t, c, id, `{"allow":true,"confirmation":"`+id[:8]+`"}`)
	if !strings.Contains(out, permission.ByCLITTY) {
		t.Fatalf("the forged terminal under a confirmed tty proof: %s", out)
	}
	// Tightening takes effect at once.
	writeConfig(t, c, "approval_policy = \"untrusted\"\n[approvals]\nterminal_proof = \"os\"\n")
	if c.terminalProof() != proofOS || c.ConfigView().Pending != nil {
		t.Fatalf("tightening waited: %s %+v", c.terminalProof(), c.ConfigView().Pending)
	}
	// A mixed change: the tightening is in force, the loosening waits.
	writeConfig(t, c, "approval_policy = \"never\"\n[approvals]\nterminal_proof = \"os\"\n[network]\nallow_local = false\n[limits]\npids = 64\n")
	st := c.Config.State()
	if p := st.File.ApprovalPolicy; p == nil || *p != "untrusted" {
		t.Fatalf("approval_policy never took effect without the person: %v", p)
	}
	if l := st.File.Limits.Pids; l == nil || *l != 64 {
		t.Fatalf("a lower pids limit waited: %v", l)
	}
}

// The looser file waits across a restart: the configuration in force is kept beside
// the database, so a file rewritten while Airlock was stopped waits too.
func TestLooserConfigWaitsAcrossARestart(t *testing.T) {
	base := t.TempDir()
	c, stop := lifeCore(t, base)
	os.MkdirAll(filepath.Dir(c.Paths.ConfigFile), 0o700)
	stop()
	if err := os.WriteFile(c.Paths.ConfigFile, []byte("sandbox_mode = \"full-access\"\n[approvals]\nterminal_proof = \"tty\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c2, stop2 := lifeCore(t, base)
	if c2.terminalProof() != proofOS {
		t.Fatal("a restart took the file-written tty proof")
	}
	if m := c2.Config.State().File.SandboxMode; m != nil {
		t.Fatalf("a restart took sandbox_mode %q", *m)
	}
	if p := c2.ConfigView().Pending; p == nil || len(p.Keys) != 2 {
		t.Fatalf("pending %+v", p)
	}
	// Removing the kept configuration does not make the file the person's either: with
	// a database there, the defaults stand in for it.
	stop2()
	if err := os.Remove(filepath.Join(c2.Paths.DataDir, "config.in-force.json")); err != nil {
		t.Fatal(err)
	}
	c3, stop3 := lifeCore(t, base)
	if c3.terminalProof() != proofOS || c3.ConfigView().Pending == nil {
		t.Fatalf("without the kept configuration the file was taken: %s %+v", c3.terminalProof(), c3.ConfigView().Pending)
	}

	// A script rewrites both files while the core is stopped: the kept configuration
	// says tty too. Its seal in the secret store does not match, so the defaults stand
	// in for it and the forged terminal still answers nothing.
	stop3()
	loose := "approval_policy = \"untrusted\"\n[approvals]\nterminal_proof = \"tty\"\n"
	tamper := func() {
		t.Helper()
		f, err := config.Parse(c.Paths.ConfigFile, []byte(loose))
		if err != nil {
			t.Fatal(err)
		}
		kept, _ := json.Marshal(f)
		if err := os.WriteFile(c.Paths.ConfigFile, []byte(loose), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.Paths.DataDir, "config.in-force.json"), kept, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tamper()
	c4, stop4 := lifeCore(t, base)
	if c4.terminalProof() != proofOS {
		t.Fatal("a restart took the tty proof from a kept configuration written outside Airlock")
	}
	p := c4.ConfigView().Pending
	if p == nil || !slices.Contains(p.Keys, "approvals.terminal_proof") || !strings.Contains(p.Message, "outside Airlock") ||
		!strings.Contains(p.Message, "airlock config confirm") {
		t.Fatalf("nothing says what waits, or why: %+v", p)
	}
	id, _ := pending(t, c4, bashReq("rm -rf ~", t.TempDir()))
	if out := forgedTerminalAnswer(t, c4, id, `{"allow":true,"confirmation":"`+id[:8]+`"}`); !strings.Contains(out, "not_proven") || !stillPending(c4, id) {
		t.Fatalf("a forged terminal answered under a tampered kept configuration: %s", out)
	}
	// The person confirms it in the window: in force, and kept (sealed) across an
	// untampered restart, with nothing waiting.
	if _, err := c4.ConfirmConfig(WindowCaller(), p.Digest); err != nil {
		t.Fatal(err)
	}
	if c4.terminalProof() != proofTTY {
		t.Fatalf("the confirmed proof is not in force: %s", c4.terminalProof())
	}
	stop4()
	c5, stop5 := lifeCore(t, base)
	if c5.terminalProof() != proofTTY || c5.ConfigView().Pending != nil {
		t.Fatalf("an untampered restart lost the confirmed values: %s %+v", c5.terminalProof(), c5.ConfigView().Pending)
	}
	if ap := c5.Config.State().File.ApprovalPolicy; ap == nil || *ap != "untrusted" {
		t.Fatalf("approval_policy after the restart: %v", ap)
	}
	// Tightened in the window (a reload), then the kept file rewritten loose again:
	// every save re-seals, so the rewrite is caught.
	writeConfig(t, c5, "approval_policy = \"untrusted\"\n")
	if c5.terminalProof() != proofOS {
		t.Fatal("tightening waited")
	}
	stop5()
	tamper()
	c6, _ := lifeCore(t, base)
	if c6.terminalProof() != proofOS || c6.ConfigView().Pending == nil {
		t.Fatalf("a kept configuration rewritten after a re-seal was taken: %s %+v", c6.terminalProof(), c6.ConfigView().Pending)
	}
}

// pam_service = "su"-like (pam_rootok, sufficient for root) lets a wrong password
// through for a root caller. Written into config.toml it waits like any loosening;
// the person's confirmation is refused with the reason and the way out; and a
// service already in force that needs no password proves nothing.
func TestPasswordlessPAMServiceIsRefused(t *testing.T) {
	name, password := pamUser(t)
	c, hc := apiCore(t, "[approvals]\npam_service = \"airlock-unix\"\n")
	dir := pamServices(t)
	if err := os.WriteFile(filepath.Join(dir, "airlock-rootok"), []byte("auth sufficient pam_rootok.so\nauth required pam_deny.so\naccount required pam_permit.so\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.presence.confDir = dir
	c.presence.userName = func(int) (string, error) { return name, nil }
	ws := t.TempDir()
	id, _ := pending(t, c, bashReq("rm -rf ~", ws))

	writeConfig(t, c, "[approvals]\npam_service = \"airlock-rootok\"\n")
	if s, _ := c.pamService(); s != "airlock-unix" {
		t.Fatalf("the reloaded file changed the PAM service to %s", s)
	}
	if code, m := post(t, hc, "/v1/approvals/"+id+"/answer", `{"allow":true,"password":"anything"}`); code != http.StatusForbidden || !stillPending(c, id) {
		t.Fatalf("a wrong password after the file named a rootok service: %d %v", code, m)
	}
	// The person's confirmation (their right password) is refused: the service proves nothing.
	code, m := post(t, hc, "/v1/config/confirm", `{"password":"`+password+`"}`)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(m["message"]), "without a password") || !strings.Contains(fmt.Sprint(m["message"]), "pam_service") {
		t.Fatalf("confirming a passwordless service: %d %v", code, m)
	}
	if _, err := c.ConfirmConfig(WindowCaller(), ""); err == nil {
		t.Fatal("the window confirmed a passwordless PAM service")
	}
	if s, _ := c.pamService(); s != "airlock-unix" {
		t.Fatalf("a refused confirmation changed the service to %s", s)
	}
	// In force from the start (a new installation's own file), it still proves nothing.
	c2, hc2 := apiCore(t, "[approvals]\npam_service = \"airlock-rootok\"\n")
	c2.presence.confDir = dir
	c2.presence.userName = func(int) (string, error) { return name, nil }
	id2, _ := pending(t, c2, bashReq("rm -rf ~", ws))
	code, m = post(t, hc2, "/v1/approvals/"+id2+"/answer", `{"allow":true,"password":"wrong"}`)
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(m["message"]), "without a password") || !stillPending(c2, id2) {
		t.Fatalf("a wrong password under a rootok service: %d %v", code, m)
	}
	// The system's own su, whose stack starts with pam_rootok: the same for a root caller.
	if _, err := os.Stat("/etc/pam.d/su"); err != nil {
		return
	}
	c3, hc3 := apiCore(t, "[approvals]\npam_service = \"su\"\n")
	c3.presence.userName = func(int) (string, error) { return name, nil }
	id3, _ := pending(t, c3, bashReq("rm -rf ~", ws))
	code, m = post(t, hc3, "/v1/approvals/"+id3+"/answer", `{"allow":true,"password":"wrong"}`)
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(m["message"]), "without a password") || !stillPending(c3, id3) {
		t.Fatalf("a wrong password under /etc/pam.d/su as root: %d %v", code, m)
	}
}

// Bounds are checked before anyone is asked: an approval TTL that would mint a dead
// token (or one past the maximum) is refused before the proof is checked and before an
// agent's request reaches the person; a schedule of @every beyond a year is refused.
func TestBoundsAreCheckedBeforeThePersonIsAsked(t *testing.T) {
	c, hc := apiCore(t, "")
	for _, ttl := range []string{"1ns", "9s", "61m", "2562047h", "soon"} {
		code, m := post(t, hc, "/v1/ops/plans/nope/approve", `{"ttl":"`+ttl+`","confirm_hash_prefix":"0123abcd","proof":{"password":"whatever"}}`)
		if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(m["message"]), "ttl") {
			t.Fatalf("ops approve with ttl %s: %d %v", ttl, code, m)
		}
		code, m = post(t, hc, "/v1/ops/plans/nope/approve-request", `{"ttl":"`+ttl+`"}`)
		if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(m["message"]), "ttl") || len(c.Broker.Pending()) != 0 {
			t.Fatalf("an agent's approve request with ttl %s: %d %v (pending %d)", ttl, code, m, len(c.Broker.Pending()))
		}
	}
	if code, m := post(t, hc, "/v1/ops/plans/nope/approve", `{"ttl":"10s","confirm_hash_prefix":"0123abcd"}`); code != http.StatusForbidden {
		t.Fatalf("a TTL within bounds goes on to the proof: %d %v", code, m)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		schedule string
		want     int
	}{{"@every 2562047h", http.StatusBadRequest}, {"@every 8785h", http.StatusBadRequest}, {"@every 8784h", http.StatusOK}, {"@every 1h", http.StatusOK}} {
		code, m := post(t, hc, "/v1/tasks", `{"name":"t`+strings.NewReplacer(" ", "", "@", "").Replace(tt.schedule)+`","argv":["true"],"cwd":"`+dir+`","schedule":"`+tt.schedule+`","overrides":{}}`)
		if code != tt.want || code != http.StatusOK && !strings.Contains(fmt.Sprint(m["message"]), "@yearly") {
			t.Fatalf("schedule %s: %d %v", tt.schedule, code, m)
		}
	}
}

// cliBin builds the airlock command for the tests that run it at a (pseudo) terminal.
func cliBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "airlock")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/airlock")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building airlock: %v\n%s", err, out)
	}
	return bin
}

// atTerminal runs the airlock command in a pseudo-terminal (script(1)), as the person
// does, typing input there; it returns what the terminal showed.
func atTerminal(t *testing.T, c *Core, bin, input string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
	}
	line := bin
	for _, a := range args {
		line += " '" + a + "'"
	}
	cmd := exec.Command("script", "-qec", line, "/dev/null")
	cmd.Env = append(os.Environ(), "AIRLOCK_HOME="+filepath.Dir(filepath.Dir(c.Paths.ConfigFile)), "XDG_RUNTIME_DIR="+filepath.Dir(filepath.Dir(c.Paths.Socket)))
	cmd.Stdin = strings.NewReader(input)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// At a terminal: `airlock status` says what waits and names the command; `airlock
// config confirm` asks the login password and takes the change into force; a task
// with the network on is created by `airlock task add` once the person types it.
func TestTheCLIConfirmsWithTheOSProof(t *testing.T) {
	name, password := pamUser(t)
	c, _ := apiCore(t, "[approvals]\npam_service = \"airlock-unix\"\n")
	c.presence.confDir = pamServices(t)
	c.presence.userName = func(int) (string, error) { return name, nil }
	bin := cliBin(t)

	writeConfig(t, c, "approval_policy = \"never\"\n[approvals]\npam_service = \"airlock-unix\"\n")
	out := atTerminal(t, c, bin, "", "status")
	if !strings.Contains(out, "WAITING FOR YOU") || !strings.Contains(out, "approval_policy") || !strings.Contains(out, "airlock config confirm") {
		t.Fatalf("airlock status:\n%s", out)
	}
	// The CLI's own view (config show, and what airlock exec resolves) is the one in force.
	out = atTerminal(t, c, bin, "", "config", "show")
	if !strings.Contains(out, "WAITING FOR YOU") || !regexp.MustCompile(`approval_policy\s+on-request`).MatchString(out) {
		t.Fatalf("airlock config show while a change waits:\n%s", out)
	}
	out = atTerminal(t, c, bin, "wrong\n", "config", "confirm")
	if c.ConfigView().Pending == nil {
		t.Fatalf("a wrong password confirmed the change:\n%s", out)
	}
	out = atTerminal(t, c, bin, password+"\n", "config", "confirm")
	if !strings.Contains(out, "Confirmed") || c.ConfigView().Pending != nil {
		t.Fatalf("airlock config confirm with the password:\n%s", out)
	}
	if p := c.Config.State().File.ApprovalPolicy; p == nil || *p != "never" {
		t.Fatalf("the confirmed policy is not in force: %v", p)
	}

	dir := t.TempDir()
	out = atTerminal(t, c, bin, password+"\n", "task", "add", "--name", "fetch", "--cwd", dir, "--network", "on", "--", "true")
	tk, err := c.Dispatch.Task(t.Context(), "fetch")
	if err != nil || tk.Overrides.Network == nil || string(*tk.Overrides.Network) != "on" {
		t.Fatalf("airlock task add --network on with the password: %v\n%s", err, out)
	}
}

// personWrites is the person writing config.toml: the file is reloaded and what it
// loosens confirmed, as they would in the window.
func personWrites(t *testing.T, c *Core, text string) {
	t.Helper()
	writeConfig(t, c, text)
	if c.ConfigView().Pending != nil {
		if _, err := c.ConfirmConfig(WindowCaller(), ""); err != nil {
			t.Fatal(err)
		}
	}
}

// TestASwitchToTheFileStoreForgesNoSeal: a script that rewrites config.toml and the kept
// configuration to the file store, and writes a matching seal into that file (which it
// can), still gets the defaults at the next start: where the keyring answers, the seal
// is the keyring's.
func TestASwitchToTheFileStoreForgesNoSeal(t *testing.T) {
	if err := secrets.New().Check(context.Background()); err != nil {
		t.Skipf("no keyring: %v", err)
	}
	base := t.TempDir()
	c, stop := lifeCore(t, base)
	os.MkdirAll(filepath.Dir(c.Paths.ConfigFile), 0o700)
	stop()
	loose := "[secrets]\nstore = \"file\"\n[approvals]\nterminal_proof = \"tty\"\n"
	f, err := config.Parse(c.Paths.ConfigFile, []byte(loose))
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := json.Marshal(f)
	baseline := filepath.Join(c.Paths.DataDir, "config.in-force.json")
	if err := os.WriteFile(c.Paths.ConfigFile, []byte(loose), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(baseline, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(kept)
	if err := secrets.NewFileStore(c.Paths.DataDir).Set(context.Background(), config.SealName(baseline), "sha256:"+hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	c2, _ := lifeCore(t, base)
	if c2.terminalProof() != proofOS {
		t.Fatal("a restart took the tty proof from a kept configuration sealed in a file the script wrote")
	}
	if p := c2.ConfigView().Pending; p == nil || !slices.Contains(p.Keys, "approvals.terminal_proof") {
		t.Fatalf("nothing says what waits: %+v", p)
	}
}
