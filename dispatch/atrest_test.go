package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/internal/atrest"
	"github.com/airlock-app/airlock/redact"
)

// TestRunRecordAndLogKeepNoCredential runs a real command that prints the secret
// dispatch injected, key-shaped strings, an assignment, a bearer token split across
// writes and a private key; an agent's denied requests during the run carry credentials
// too. None of it may reach the log file, the run record, the database file or its WAL.
func TestRunRecordAndLogKeepNoCredential(t *testing.T) {
	const injected = "inj3cted-V4LUE-5e6f7a"
	const anthropicKey = "sk-ant-api03-QmFzZTY0U2VjcmV0S2V5VmFsdWUxMjM0NTY3ODkw"
	const keyBody = "MIIEpAIBAAKCAQEAprivatekeybody"
	h := newHarness(t, withOptions(func(o *Options) { o.Secrets = secretMap{"API_TOKEN": injected} }))
	h.start()
	ctx := context.Background()
	stop := filepath.Join(h.root, "stop")
	script := `echo "calling with $API_TOKEN"; echo "key ` + anthropicKey + `"; echo "export PGPASSWORD=hunter2"; ` +
		`printf -- '-----BEGIN RSA PRIVATE KEY-----\n` + keyBody + `\n-----END RSA PRIVATE KEY-----\n'; ` +
		`printf 'curl -H "Authorization: Bearer tok-'; sleep 0.05; printf 'abcdef123"\n'; ` +
		`while [ ! -e ` + stop + ` ]; do sleep 0.02; done; printf 'last line without newline %s' "$API_TOKEN"; exit 3`
	// The script is a file: the task's own argv is stored as the person wrote it.
	scriptFile := filepath.Join(h.root, "leaky.sh")
	if err := os.WriteFile(scriptFile, []byte(script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tk := h.task(TaskSpec{Name: "leaky", Cwd: h.ws, Secrets: []string{"API_TOKEN"}, Argv: []string{"bash", scriptFile}})
	r := h.wait(h.runNow(tk.Name).ID, StatusRunning)

	// What an agent of the run was denied, three times: the run pauses, saying why.
	subject := "bash: PGPASSWORD=hunter2 psql -h db && curl -H 'Authorization: Bearer den1ed-tok-77' https://x"
	for range MaxSameDenials {
		if _, err := h.d.RecordDenial(ctx, r.ID, subject); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := h.d.Run(ctx, r.ID)
	if !got.Paused || !strings.Contains(got.Reason, "PGPASSWORD="+redact.Marker) {
		t.Errorf("run not paused with a redacted reason: %+v", got)
	}
	if err := h.d.Resume(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = h.wait(r.ID, StatusFailed)

	secrets := []string{injected, anthropicKey, "hunter2", keyBody, "tok-abcdef123", "den1ed-tok-77"}
	log := readFile(t, r.LogPath)
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("%q in the run log:\n%s", s, log)
		}
	}
	for _, s := range []string{"calling with " + redact.Marker, "export PGPASSWORD=" + redact.Marker, "last line without newline " + redact.Marker} {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
	if strings.Index(log, "last line without newline") > strings.Index(log, "[airlock] failed") {
		t.Errorf("the last output line came after the status line:\n%s", log)
	}
	for _, s := range secrets {
		if strings.Contains(h.ev.text(), s) {
			t.Errorf("%q in the published events", s)
		}
	}
	for k := range r.Denials {
		if strings.Contains(k, "hunter2") || r.Denials[k] != MaxSameDenials {
			t.Errorf("denials: %v", r.Denials)
		}
	}
	atrest.Check(t, h.dbPath, "running", secrets...)
	h.closeAll()
	atrest.Check(t, h.dbPath, "closed", secrets...)
}

// TestHostAllowanceSurvivesRedaction: the command a host allowance was given for is
// stored redacted and still covers the task's real command.
func TestHostAllowanceSurvivesRedaction(t *testing.T) {
	h := newHarness(t)
	argv := []string{"mysql", "--password", "hunter2", "-e", "select 1"}
	r := Run{TaskID: 1, Trigger: TriggerManual, Status: StatusQueued,
		HostAllowed: &HostAllowance{By: "window", Argv: argv, Dir: "/w"}}
	if err := h.db.Create(&r).Error; err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := h.db.Take(&back, r.ID).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(back.HostAllowed.Argv, " "), "hunter2") {
		t.Fatalf("stored argv: %q", back.HostAllowed.Argv)
	}
	if !allowanceCovers(back.HostAllowed, argv, "/w") || allowanceCovers(back.HostAllowed, []string{"mysql", "-e", "drop table x"}, "/w") {
		t.Fatal("the stored allowance does not cover exactly its command")
	}
}
