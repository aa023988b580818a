package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission/preflight"
)

var reviewerScripts = map[string]string{
	"allow":    `cat >/dev/null; echo '{"decision":"allow","risk":"low","rationale":"routine"}'`,
	"deny":     `cat >/dev/null; echo '{"decision":"deny","risk":"medium","rationale":"not needed"}'`,
	"critical": `cat >/dev/null; echo '{"decision":"allow","risk":"critical","rationale":"wipes prod"}'`,
	"crash":    `echo boom >&2; exit 3`,
	"hang":     `sleep 30`,
	"silent":   `cat >/dev/null`,
	"garbage":  `cat >/dev/null; echo 'sure, go ahead'`,
}

// expectMatrix states the pipeline's steps 5–7 for a non-shell tool of a tier.
func expectMatrix(pol ApprovalPolicy, tier Tier, interactive bool, rev string) (Verdict, Layer) {
	if interactive {
		if pol == PolicyNever {
			return Deny, LayerPolicy
		}
		return Ask, LayerTier // never the reviewer, never a rule or grant
	}
	switch tier {
	case P0:
		return Allow, LayerTier
	case P1:
		if pol == PolicyOnFailure || pol == PolicyNever {
			return Allow, LayerPolicy
		}
	case P2:
		if pol == PolicyNever {
			return Deny, LayerPolicy
		}
	}
	switch rev {
	case "allow":
		return Allow, LayerReviewer
	case "deny", "critical":
		return Deny, LayerReviewer
	}
	return Ask, LayerTier // user, or a failing reviewer falls back to the person
}

func TestPolicyTierInteractiveReviewerMatrix(t *testing.T) {
	db := openDB(t, t.TempDir())
	tools := map[Tier]string{P0: ToolReadFile, P1: ToolWriteFile, P2: ToolOpsApply}
	revs := []string{"user", "allow", "deny", "critical", "crash", "hang", "silent", "garbage"}
	paths := map[string]string{}
	for name, body := range reviewerScripts {
		paths[name] = script(t, "reviewer-"+name, body)
	}
	n := 0
	for _, pol := range []ApprovalPolicy{PolicyUntrusted, PolicyOnRequest, PolicyOnFailure, PolicyNever} {
		for _, rev := range revs {
			s := Settings{ApprovalPolicy: string(pol), ApprovalsReviewer: "user"}
			if rev != "user" {
				s.ApprovalsReviewer = "auto_review"
				timeout := "20s" // generous: the machine is shared; only the hanging reviewer waits it out
				if rev == "hang" {
					timeout = "300ms"
				}
				s.Reviewer = ReviewerSection{Command: []string{paths[rev]}, Timeout: timeout}
			}
			b, _ := newBroker(t, db, effective(t, s))
			for _, tier := range []Tier{P0, P1, P2} {
				for _, interactive := range []bool{false, true} {
					req := Request{ID: fmt.Sprintf("m%d", n), Tool: tools[tier], Params: params("path", "/work/x"),
						Context: Context{Session: "s", Policy: PolicySummary{Mode: "workspace-write"}}}
					if interactive {
						req.Escalation = &Escalation{Reason: "write outside the workspace"}
					}
					n++
					ev := b.evaluate(context.Background(), &req, evalMode{hooks: true, reviewer: true})
					wantV, wantL := expectMatrix(pol, tier, interactive, rev)
					d := ev.Decision
					if d.Verdict != wantV || d.Layer != wantL {
						t.Errorf("policy %s, %s, interactive-only %v, reviewer %s: got %s by %s (%v), want %s by %s",
							pol, tier, interactive, rev, d.Verdict, d.Layer, d.Reasons, wantV, wantL)
					}
					if interactive && (!d.InteractiveOnly || d.Kind != KindIsolationEscalation || d.Tier != P2) {
						t.Errorf("escalation not marked interactive-only P2: %+v", d)
					}
					if (rev == "crash" || rev == "hang" || rev == "silent" || rev == "garbage") && d.Verdict == Ask && !interactive &&
						!strings.Contains(strings.Join(d.Reasons, " "), "asking the person") {
						t.Errorf("failing reviewer %s: reasons %v do not say it fell back to the person", rev, d.Reasons)
					}
				}
			}
			_ = b.Close()
		}
	}
	t.Logf("%d matrix cases", n)
}

func TestReviewerReceivesRequestJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "in.json")
	rev := script(t, "rev", `cat > `+out+`; echo '{"decision":"deny","risk":"high","rationale":"no"}'`)
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalsReviewer: "auto_review", Reviewer: ReviewerSection{Command: []string{rev}}}))
	d, err := b.Await(context.Background(), Request{Tool: ToolWebFetch, Params: params("url", "https://example.com"), Context: Context{Run: "run-1"}})
	if err != nil || d.Verdict != Deny || d.Layer != LayerReviewer || d.AnsweredBy != "reviewer" {
		t.Fatalf("Await = %+v, %v", d, err)
	}
	var in ReviewInput
	body, _ := os.ReadFile(out)
	if err := json.Unmarshal(body, &in); err != nil || in.Tool != ToolWebFetch || in.Tier != P1 || in.Context.Run != "run-1" || !strings.Contains(string(in.Params), "example.com") {
		t.Fatalf("reviewer input %s (%v)", body, err)
	}
}

// untrusted asks for every command off the known-safe list, even where the tier would
// let it run, and honours no grant for it; a known-safe command is treated as on-request
// treats it (asked at P1, remembered by a grant, silent at P0).
func TestUntrustedKnownSafe(t *testing.T) {
	ctx := context.Background()
	// bash lowered to P0: only the known-safe commands run unasked.
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "untrusted", Permission: PermissionSection{Tiers: map[string]string{"bash": "P0"}}}))
	cases := []struct {
		cmd   string
		want  Verdict
		layer Layer
	}{
		{"ls -la", Allow, LayerTier},
		{"cat go.mod | wc -l", Allow, LayerTier},
		{"git status", Allow, LayerTier},
		{"git commit -am wip", Ask, LayerPolicy},
		{"git -c core.pager=sh log", Ask, LayerTier}, // P2: the pager is a program git runs
		{"npm test", Ask, LayerPolicy},
		{"make install", Ask, LayerPolicy},
		{"ls > out", Ask, LayerPolicy},
		{"rm -rf /", Ask, LayerTier},
		{"cat ~/.ssh/id_rsa", Ask, LayerTier}, // cat is known-safe; reading a key is not
	}
	for _, c := range cases {
		d := b.Check(ctx, bash(c.cmd)).Decision
		if d.Verdict != c.want || d.Layer != c.layer {
			t.Errorf("untrusted, bash P0: %q = %s by %s (%v), want %s by %s", c.cmd, d.Verdict, d.Layer, d.Reasons, c.want, c.layer)
		}
	}
	// bash at its default P1: a known-safe command asks, as under on-request.
	b1, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "untrusted"}))
	if d := b1.Check(ctx, bash("ls -la")).Decision; d.Verdict != Ask {
		t.Errorf("untrusted, bash P1: ls -la = %+v, want ask", d)
	}
	// A remembered grant answers a known-safe command (on-request would honour it too),
	// never another one.
	for _, g := range []api.GrantRecord{
		{Tool: ToolBash, Pattern: "npm test", Scope: ScopeAlways, Department: "dev"},
		{Tool: ToolBash, Pattern: "ls -la", Scope: ScopeSession, Session: "s1"},
	} {
		if _, err := b1.Grants().Add(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if d := b1.Check(ctx, bash("npm test")).Decision; d.Verdict != Ask {
		t.Errorf("untrusted honoured a grant for npm test: %+v", d)
	}
	if d := b1.Check(ctx, bash("ls -la")).Decision; d.Verdict != Allow || d.Layer != LayerGrant {
		t.Errorf("untrusted: ls -la with a session grant = %+v, want allow by grant", d)
	}
}

func TestPreflightInPipeline(t *testing.T) {
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	ev := b.Check(ctx, bash("sudo rm -rf ~"))
	d := ev.Decision
	if d.Verdict != Ask || !d.InteractiveOnly || d.Kind != KindBashDestructive || d.Tier != P2 || len(ev.Findings) == 0 {
		t.Fatalf("rm -rf ~ = %+v", ev)
	}
	if !strings.Contains(strings.Join(d.Reasons, "\n"), "rm") {
		t.Fatalf("reasons do not explain: %v", d.Reasons)
	}
	d = b.Check(ctx, bash("airlock approvals allow req_1")).Decision
	if !d.InteractiveOnly || d.Kind != KindSelfApproval {
		t.Fatalf("self-approval = %+v", d)
	}
	d = b.Check(ctx, bash("echo rm -rf /")).Decision
	if d.InteractiveOnly || d.Tier != P1 {
		t.Fatalf("lookalike = %+v", d)
	}
	// Unparseable commands cannot be checked: P2, but not interactive-only.
	d = b.Check(ctx, bash("echo 'unterminated")).Decision
	if d.Tier != P2 || d.InteractiveOnly {
		t.Fatalf("unparseable = %+v", d)
	}

	strict, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{Ops: OpsSection{Strict: ptr(true)}}))
	sev := strict.Check(ctx, bash("terraform destroy"))
	if sev.Decision.Verdict != Deny || sev.Decision.Layer != LayerPreflight {
		t.Fatalf("ops.strict terraform destroy = %+v", sev.Decision)
	}
	msg := strings.Join(sev.Decision.Reasons, "\n")
	if !strings.Contains(msg, "ops_plan → ops_diff → ops_approve → ops_apply") || !strings.Contains(msg, "terraform destroy") {
		t.Fatalf("strict message = %q", msg)
	}
	if d := strict.Check(ctx, bash("terraform plan")).Decision; d.Verdict == Deny {
		t.Fatalf("ops.strict denied terraform plan: %+v", d)
	}
}

// A file tool writing what a redirection would be flagged for asks the same way: an
// agent that edits the Claude Code settings holding Airlock's hook, or Airlock's own
// config, answers its own questions; a start-up file in the home directory asks every time.
func TestFileWritePreflight(t *testing.T) {
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), func(o *BrokerOptions) {
		o.Preflight = preflight.Options{Home: "/home/u", AirlockPaths: []string{"/home/u/.config/airlock/config.toml"}}
	})
	write := func(tool, path string) Decision {
		req := Request{Tool: tool, Params: params("path", path, "content", "{}"),
			Context: Context{Session: "s1", Department: "dev", Cwd: "/home/u/proj", Policy: PolicySummary{Mode: "full-access"}}}
		return b.Check(ctx, req).Decision
	}
	for _, tc := range []struct {
		tool, path  string
		kind        Kind
		interactive bool
		tier        Tier
		reason      string
	}{
		{ToolEditFile, ".claude/settings.json", KindSelfApproval, true, P2, "Claude Code settings"},
		{ToolWriteFile, "/home/u/.claude/settings.local.json", KindSelfApproval, true, P2, "Claude Code settings"},
		{ToolWriteFile, "/home/u/.config/airlock/config.toml", KindSelfApproval, true, P2, "configuration"},
		{ToolEditFile, "/home/u/.bashrc", "", false, P2, "~/.bashrc"},
		{ToolWriteFile, "../.ssh/authorized_keys", "", false, P2, "~/.ssh/authorized_keys"},
		{ToolWriteFile, "/etc/sudoers.d/x", "", false, P2, "/etc/sudoers.d/x"},
		{ToolWriteFile, "src/main.go", "", false, P1, ""},
		{ToolWriteFile, "notes/bashrc.md", "", false, P1, ""},
	} {
		d := write(tc.tool, tc.path)
		if d.Kind != tc.kind || d.InteractiveOnly != tc.interactive || d.Tier != tc.tier {
			t.Errorf("%s %s = kind %q interactive %v tier %s, want %q %v %s (%v)", tc.tool, tc.path, d.Kind, d.InteractiveOnly, d.Tier, tc.kind, tc.interactive, tc.tier, d.Reasons)
		}
		if tc.reason != "" && !strings.Contains(strings.Join(d.Reasons, "\n"), tc.reason) {
			t.Errorf("%s %s: reasons %v do not name %q", tc.tool, tc.path, d.Reasons, tc.reason)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCloudOpsPosture(t *testing.T) {
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	req := bash("aws s3 ls")
	req.Context.Policy.Posture = PostureCloudOps
	d := b.Check(context.Background(), req).Decision
	if d.Tier != P2 || d.Verdict != Ask {
		t.Fatalf("cloudops bash = %+v", d)
	}
	if !PostureNetwork(PostureCloudOps) || PostureNetwork("") {
		t.Fatal("cloudops must turn the network on")
	}
	for _, tool := range []string{"ops_plan", "ops_diff", "ops_verify", "ops_journal"} {
		if tier := NewTierTable(nil).For(tool, PostureCloudOps); tier != P0 {
			t.Errorf("cloudops %s = %s, want P0", tool, tier)
		}
	}
	// ops_apply and ops_approve never drop below P2, even when configured lower.
	tt := NewTierTable(map[string]Tier{"ops_apply": P0, "ops_approve": P1})
	if tt.For("ops_apply", "") != P2 || tt.For("ops_approve", "") != P2 {
		t.Fatal("ops tools lowered below P2")
	}
}

func TestTaskGrant(t *testing.T) {
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	ctx := context.Background()
	argv := []string{"make", "backup", "DEST=/srv/backups dir"}
	mk := func(argv []string) Request {
		p, _ := json.Marshal(map[string]any{"argv": argv})
		return Request{Tool: ToolExec, Params: p, Context: Context{Task: "t1", TaskArgv: []string{"make", "backup", "DEST=/srv/backups dir"}, Policy: PolicySummary{Mode: "workspace-write"}}}
	}
	if d := b.Check(ctx, mk(argv)).Decision; d.Verdict != Allow || d.Layer != LayerTask {
		t.Fatalf("task's own argv = %+v", d)
	}
	if d := b.Check(ctx, mk([]string{"make", "backup", "DEST=/"})).Decision; d.Verdict != Ask {
		t.Fatalf("edited argv = %+v", d)
	}
	// The shell form of the same command is the same command.
	req := bash(api.ShellJoin(argv))
	req.Context.TaskArgv = argv
	if d := b.Check(ctx, req).Decision; d.Verdict != Allow || d.Layer != LayerTask {
		t.Fatalf("task argv as a command line = %+v", d)
	}
	// A destructive task command asks at every run.
	danger := []string{"rm", "-rf", "/srv/old"}
	req = mk(danger)
	req.Context.TaskArgv = danger
	if d := b.Check(ctx, req).Decision; d.Verdict != Ask || !d.InteractiveOnly {
		t.Fatalf("destructive task argv = %+v", d)
	}
}

// TestCheckEvaluation: Broker.Check evaluates without asking, with the rule, the findings
// and the policy that decided, as POST /v1/permission/check returns it.
func TestCheckEvaluation(t *testing.T) {
	e := effective(t, Settings{Permission: PermissionSection{Rules: []RuleSetting{{Tool: "bash", Pattern: "git push *", Action: "ask"}}}})
	b, _ := newBroker(t, openDB(t, t.TempDir()), e)
	ev := b.Check(context.Background(), bash("git push --force origin main"))
	if ev.Decision.Verdict != Ask || ev.Decision.Kind != KindBashDestructive || ev.Rule == nil || ev.Rule.Pattern != "git push *" || len(ev.Findings) == 0 {
		t.Fatalf("offline check = %+v", ev)
	}
	out, _ := json.Marshal(ev)
	for _, want := range []string{`"verdict":"ask"`, `"tier":"P2"`, `"findings"`, `"rule"`, `"approval_policy":"on-request"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check JSON lacks %s: %s", want, out)
		}
	}
}
