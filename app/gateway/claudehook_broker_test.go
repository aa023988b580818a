package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/sandbox"
)

// wireBroker hands the hook's requests to a real permission broker through their JSON,
// as the local API does.
type wireBroker struct{ b *permission.Broker }

func (w wireBroker) Await(ctx context.Context, req api.Request) (api.Decision, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return api.Decision{}, err
	}
	var pr permission.Request
	if err := json.Unmarshal(raw, &pr); err != nil {
		return api.Decision{}, err
	}
	d, err := w.b.Await(ctx, pr)
	if err != nil {
		return api.Decision{}, err
	}
	raw, _ = json.Marshal(d)
	var out api.Decision
	return out, json.Unmarshal(raw, &out)
}

func (w wireBroker) After(context.Context, api.AfterToolUse) error { return nil }

func realBroker(t *testing.T, home string) *permission.Broker {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "airlock.db") + "?_journal_mode=WAL&_foreign_keys=1&_busy_timeout=10000&_txlock=immediate"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := permission.Migrate(db); err != nil {
		t.Fatal(err)
	}
	eff, err := permission.Resolve(permission.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := permission.NewBroker(context.Background(), permission.BrokerOptions{DB: db, Settings: eff, Preflight: preflight.Options{Home: home}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Close()
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	return b
}

// Claude Code's Bash runs on the host: `cat ~/.ssh/id_rsa` through the hook asks at P2,
// as Read of the same file does, and `echo hi` stays P1. The person's deny reaches Claude
// Code with the reason.
func TestClaudeHookCredentialReadsAreP2(t *testing.T) {
	const home = "/home/u"
	b := realBroker(t, home)
	tests := []struct {
		name, tool, input string
		tier              string
		reason            string
	}{
		{"bash cat key", "Bash", `{"command":"cat ~/.ssh/id_rsa"}`, "P2", "SSH keys (~/.ssh/id_rsa)"},
		{"bash base64 aws", "Bash", `{"command":"base64 $HOME/.aws/credentials | head"}`, "P2", "AWS credentials"},
		{"bash in sh -c", "Bash", `{"command":"sh -c 'cp ~/.ssh/id_rsa /tmp/k'"}`, "P2", "SSH keys"},
		{"bash relative in home", "Bash", `{"command":"cat .netrc"}`, "P2", "~/.netrc"},
		{"read key", "Read", `{"file_path":"/home/u/.ssh/id_rsa"}`, "P2", "SSH keys"},
		{"grep keys", "Grep", `{"pattern":"PRIVATE","path":"/home/u/.ssh"}`, "P2", "SSH keys"},
		{"bash echo", "Bash", `{"command":"echo hi"}`, "P1", ""},
		{"bash ls keys", "Bash", `{"command":"ls -la ~/.ssh"}`, "P1", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			event := fmt.Sprintf(`{"session_id":"s%d","cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s}`, i, home, tt.tool, tt.input)
			seen := make(chan permission.PendingRequest, 1)
			go func() {
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if p := b.Pending(); len(p) > 0 {
						seen <- p[0]
						_, _ = b.Answer(context.Background(), p[0].ID, permission.Answer{Allow: false, Reason: "not my keys", By: permission.ByWindow, Interactive: true})
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				close(seen)
			}()
			var out bytes.Buffer
			h := ClaudeHook{Broker: wireBroker{b}, Wait: 30 * time.Second, MCPServer: "airlock", Bash: testBash()}
			if err := h.Run(context.Background(), strings.NewReader(event), &out); err != nil {
				t.Fatal(err)
			}
			p, ok := <-seen
			if !ok {
				t.Fatalf("nothing was asked; the hook said %s", out.String())
			}
			if string(p.Tier) != tt.tier || p.InteractiveOnly {
				t.Fatalf("pending %s at %s (interactive-only %v, reasons %v), want %s", p.Summary, p.Tier, p.InteractiveOnly, p.Reasons, tt.tier)
			}
			if tt.tier == "P2" && (len(p.Scopes) != 1 || p.Scopes[0] != permission.ScopeOnce) {
				t.Fatalf("a credential read offers %v, want once only", p.Scopes)
			}
			if !strings.Contains(strings.Join(p.Reasons, "\n"), tt.reason) {
				t.Fatalf("reasons %v do not say %q", p.Reasons, tt.reason)
			}
			var o ClaudeOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.HookSpecificOutput.PermissionDecision != api.Deny ||
				!strings.Contains(o.HookSpecificOutput.PermissionDecisionReason, "not my keys") {
				t.Fatalf("hook answered %s (%v)", out.String(), err)
			}
		})
	}
}

// TestClaudeHookEscalationSaysWhatAllowingDoes: Claude Code's `touch` outside the
// workspace is an escalation the real broker asks about; with the Bash sandbox on, the
// person's allow reaches Claude Code as the command in the sandbox with exactly the
// grant the question named, and the answer says that is all it lifts; unconfined, the
// question handed to Claude Code's prompt says allowing runs the whole command on the
// host, not that it gives one path.
func TestClaudeHookEscalationSaysWhatAllowingDoes(t *testing.T) {
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	b := realBroker(t, home)
	b.SetIsolation(permission.SandboxIsolation{PolicyFor: func(_ context.Context, req permission.Request) (sandbox.Policy, error) {
		return sandbox.Resolve(sandbox.Inputs{Cwd: req.Context.Cwd, Home: home, Env: func(string) string { return "" }})
	}})
	event := `{"session_id":"esc","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch ` + other + `/x"},"tool_use_id":"t1"}`
	bash := testBash()
	bash.Policy = func(cwd string) (sandbox.Policy, error) {
		return sandbox.Resolve(sandbox.Inputs{Cwd: cwd, Home: home, Env: func(string) string { return "" }})
	}

	answered := make(chan permission.PendingRequest, 1)
	go func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if p := b.Pending(); len(p) > 0 {
				answered <- p[0]
				_, _ = b.Answer(context.Background(), p[0].ID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true})
				return
			}
		}
		close(answered)
	}()
	h := ClaudeHook{Broker: wireBroker{b}, Wait: 20 * time.Second, MCPServer: "airlock", Bash: bash, Headless: func() bool { return false }}
	got := hookAnswer(t, h, event)
	p, ok := <-answered
	if !ok || p.Grant == nil {
		t.Fatalf("no escalation was asked (%+v); the hook said %+v", p, got)
	}
	argv, _ := splitShellJoin(got.UpdatedInput["command"].(string))
	if got.PermissionDecision != api.Allow || !slices.Contains(argv, "--grant-writable") || !slices.Contains(argv, p.Grant.Writable[0]) ||
		!strings.Contains(got.PermissionDecisionReason, "allowing lifts only "+p.Grant.String()) {
		t.Fatalf("allowed escalation: %+v (argv %q), asked %s", got, argv, p.Grant)
	}

	// Unconfined: nobody in Airlock answers; the question goes to Claude Code's prompt.
	h = ClaudeHook{Broker: wireBroker{b}, Wait: 200 * time.Millisecond, MCPServer: "airlock", Bash: BashSandbox{Unconfined: true}, Headless: func() bool { return false }}
	got = hookAnswer(t, h, strings.Replace(event, `"esc"`, `"esc2"`, 1))
	r := got.PermissionDecisionReason
	if got.UpdatedInput != nil || strings.Contains(r, "for this one call") || !strings.Contains(r, "runs the whole command on your machine") {
		t.Fatalf("unconfined escalation: %+v", got)
	}
}
