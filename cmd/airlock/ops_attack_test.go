package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// opsShop is a workdir with a SQLite database of two users, migrate.sql adding a
// column, and a plan file per apply command given (name → apply, inputs).
func opsShop(t *testing.T, plans map[string]string, inputs map[string][]string) string {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed")
	}
	shop := filepath.Join(t.TempDir(), "shop")
	os.MkdirAll(shop, 0o755)
	os.WriteFile(filepath.Join(shop, "migrate.sql"), []byte("ALTER TABLE users ADD COLUMN email TEXT;\n"), 0o644)
	if out, err := exec.Command("sqlite3", filepath.Join(shop, "db.sqlite"),
		"CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada'), ('grace');").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	for name, apply := range plans {
		p := map[string]any{
			"target": map[string]any{"provider": "sqlite", "device": "db.sqlite"}, "intent": "add an email column (" + name + ")", "workdir": ".",
			"apply":  map[string]any{"shell": apply},
			"diff":   map[string]any{"argv": []string{"cat", "migrate.sql"}},
			"steps":  []map[string]any{{"description": "ALTER TABLE users ADD COLUMN email TEXT", "effect": "add column", "reversibility": "hard", "blast_radius": "low"}},
			"verify": []map[string]any{{"command": "sqlite3 -readonly db.sqlite .schema", "expect_text": "email"}},
		}
		if in, ok := inputs[name]; ok {
			p["inputs"] = in
		}
		b, _ := json.Marshal(p)
		os.WriteFile(filepath.Join(shop, name+".json"), b, 0o644)
	}
	return shop
}

// The ops attack of the apply's bytes from the CLI, a person approving at a terminal
// with the OS proof: `airlock ops approve` of a plan without inputs refuses before the
// person types anything, naming migrate.sql and the way out; a plan that declares it but
// reads it as .//migrate.sql applies the approved ALTER TABLE even though migrate.sql
// is DROP TABLE users by the time sqlite3 reads it.
func TestOpsApplyRunsOnlyApprovedBytesFromTheCLI(t *testing.T) {
	needKeyring(t)
	in := newInstance(t)
	password := in.pamProof("")
	in.startDaemon()
	shop := opsShop(t, map[string]string{
		"bare":  "sqlite3 -bail db.sqlite < migrate.sql",
		"spelt": "cat migrate.sql > /dev/null; sleep 1; sqlite3 -bail db.sqlite < .//migrate.sql",
	}, map[string][]string{"spelt": {"migrate.sql"}})
	js := func(args ...string) map[string]any { t.Helper(); return in.jsonIn(shop, args...) }
	open := func(name string) (string, string) {
		t.Helper()
		p := js("ops", "plan", "--file", filepath.Join(shop, name+".json"))
		id := p["id"].(string)
		js("ops", "diff", id, "--run")
		return id, p["hash"].(string)
	}

	bare, hash := open("bare")
	out := in.onTTYAllowFail(hash[:8]+"\n"+password+"\n", "ops", "approve", bare)
	if strings.Contains(out, "token: ") || !strings.Contains(out, "does not hold migrate.sql") || !strings.Contains(out, "declare it in inputs") {
		t.Fatalf("approve of a plan without inputs:\n%s", out)
	}

	id, hash := open("spelt")
	out = in.onTTY(hash[:8]+"\n"+password+"\n", "ops", "approve", id)
	i := strings.Index(out, "token: ")
	if i < 0 {
		t.Fatalf("no token printed:\n%s", out)
	}
	token := strings.Fields(out[i+len("token: "):])[0]
	apply := in.cmd("ops", "apply", id, "--token", token, "--json")
	var applied strings.Builder
	apply.Stdout, apply.Stderr = &applied, &applied
	if err := apply.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the plan is applying every check before the run has passed: swap the file.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st := js("ops", "show", id); st["status"] == "applying" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plan never became applying")
		}
	}
	os.WriteFile(filepath.Join(shop, ".swap"), []byte("DROP TABLE users;\n"), 0o644)
	os.Rename(filepath.Join(shop, ".swap"), filepath.Join(shop, "migrate.sql"))
	if err := apply.Wait(); err != nil || !strings.Contains(applied.String(), `"status": "applied"`) {
		t.Fatalf("apply: %v\n%s", err, applied.String())
	}
	if schema, _ := exec.Command("sqlite3", filepath.Join(shop, "db.sqlite"), ".schema users").Output(); !strings.Contains(string(schema), "email") {
		t.Fatalf("the apply did not run the approved ALTER TABLE (users now: %q)", schema)
	}
	if stdout, stderr, code := in.run("ops", "journal", "--plan", id, "--verify"); code != 0 {
		t.Fatalf("journal --verify: %d %s %s", code, stdout, stderr)
	}
}

// A journal put back to an older state from the CLI's side of the machine: a script of
// the same user saves the project's head row and the anchor file, lets the journal grow,
// deletes the new entries with the sqlite3 CLI and restores both, with the core stopped
// meanwhile. Both are authentic; `airlock ops journal --verify` reports the journal
// rolled back, with the evidence, and exits non-zero.
func TestOpsJournalRolledBackFromTheCLI(t *testing.T) {
	needKeyring(t)
	in := newInstance(t)
	d := in.startDaemon()
	shop := opsShop(t, map[string]string{"one": "sqlite3 -bail db.sqlite < migrate.sql", "two": "sqlite3 -bail db.sqlite < migrate.sql"},
		map[string][]string{"one": {"migrate.sql"}, "two": {"migrate.sql"}})
	js := func(args ...string) map[string]any { t.Helper(); return in.jsonIn(shop, args...) }
	project := "dir:" + shop
	db := filepath.Join(in.home, "data", "airlock.db")
	anchor := filepath.Join(in.home, "data", "ops", "journal-anchor.json")
	sql := func(q string) string {
		t.Helper()
		out, err := exec.Command("sqlite3", db, q).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %s: %v %s", q, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	one := js("ops", "plan", "--file", filepath.Join(shop, "one.json"))["id"].(string)
	js("ops", "diff", one, "--run")
	savedHead := sql("SELECT seq || '|' || hash || '|' || mac FROM ops_journal_heads WHERE project = '" + project + "'")
	savedAnchor, err := os.ReadFile(anchor)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Split(savedHead, "|")
	if len(head) != 3 {
		t.Fatalf("saved head %q", savedHead)
	}
	if _, _, code := in.run("ops", "reject", one, "--reason", "not tonight"); code != 0 {
		t.Fatal("reject")
	}
	two := js("ops", "plan", "--file", filepath.Join(shop, "two.json"))["id"].(string)
	js("ops", "diff", two, "--run")
	if stdout, _, code := in.run("ops", "journal", "--project", project, "--verify"); code != 0 || !strings.Contains(stdout, "chain and signatures OK") {
		t.Fatalf("the journal before the attack: %d %s", code, stdout)
	}
	last := sql("SELECT max(seq) FROM ops_journal_entries WHERE project = '" + project + "'")

	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	sql("DROP TRIGGER IF EXISTS ops_journal_no_delete; DELETE FROM ops_journal_entries WHERE project = '" + project + "' AND seq > " + head[0] + "; " +
		"UPDATE ops_journal_heads SET seq = " + head[0] + ", hash = '" + head[1] + "', mac = '" + head[2] + "' WHERE project = '" + project + "';")
	if err := os.WriteFile(anchor, savedAnchor, 0o600); err != nil {
		t.Fatal(err)
	}
	in.startDaemon()

	stdout, stderr, code := in.run("ops", "journal", "--project", project, "--verify")
	if code == 0 || !strings.Contains(stdout, "rolled back: seq "+last+": the journal was rolled back") ||
		!strings.Contains(stdout, "records seq "+last) || !strings.Contains(stdout, "only seq "+head[0]) ||
		!strings.Contains(stderr, "failed verification") {
		t.Fatalf("journal --verify after the rollback: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Log(stdout)
}
