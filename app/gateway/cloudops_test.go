package gateway

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission/preflight"
)

// The providers the Cloud Ops mode names, each with its runbook.
var cloudOpsProviders = []string{"aws", "cloudflare", "digitalocean", "gcp", "junos", "runpod", "vyos"}

func TestCloudOpsPromptsAndResources(t *testing.T) {
	ctx := context.Background()
	allow := &recordingBroker{decide: func(api.Request) api.Decision { return api.Decision{Verdict: api.Allow} }}
	cs := connect(t, Options{Policy: testPolicy(t, t.TempDir()), Broker: allow})
	posture := cloudOpsPosture()

	t.Run("prompts/list offers the posture and the runbooks", func(t *testing.T) {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*mcp.Prompt{}
		for _, p := range res.Prompts {
			byName[p.Name] = p
		}
		if byName["cloudops"] == nil || byName["runbook"] == nil {
			t.Fatalf("prompts = %v", res.Prompts)
		}
		if a := byName["runbook"].Arguments; len(a) != 1 || a[0].Name != "provider" || !a[0].Required ||
			!strings.Contains(a[0].Description, strings.Join(cloudOpsProviders, ", ")) {
			t.Fatalf("runbook arguments = %+v", a)
		}
	})
	t.Run("prompts/get cloudops is the posture, with a provider its runbook too", func(t *testing.T) {
		got := promptText(t, cs, "cloudops", nil)
		if got != posture {
			t.Fatalf("cloudops prompt = %q", got)
		}
		got = promptText(t, cs, "cloudops", map[string]string{"provider": "vyos"})
		if !strings.HasPrefix(got, posture) || !strings.Contains(got, "# VyOS runbook") {
			t.Fatalf("cloudops prompt for vyos = %q", got)
		}
	})
	t.Run("prompts/get runbook for each provider", func(t *testing.T) {
		for _, p := range cloudOpsProviders {
			got := promptText(t, cs, "runbook", map[string]string{"provider": p})
			for _, section := range []string{"## Inspect read-only", "## Produce a machine-checkable diff", "## Verify assertions", "## What is irreversible"} {
				if !strings.Contains(got, section) {
					t.Errorf("runbook %s has no %q", p, section)
				}
			}
		}
	})
	t.Run("an unknown or missing provider is an error that lists the providers", func(t *testing.T) {
		for _, args := range []map[string]string{{"provider": "azure"}, {}} {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "runbook", Arguments: args})
			if err == nil || !strings.Contains(err.Error(), strings.Join(cloudOpsProviders, ", ")) {
				t.Errorf("runbook %v: err = %v", args, err)
			}
		}
	})
	t.Run("resources/list and resources/read: the posture and one runbook per provider", func(t *testing.T) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
			if r.MIMEType != "text/markdown" || r.Title == "" || r.Description == "" {
				t.Errorf("resource %+v lacks a type, title or description", r)
			}
		}
		want := []string{"airlock://cloudops/posture"}
		for _, p := range cloudOpsProviders {
			want = append(want, "airlock://runbooks/"+p)
		}
		if strings.Join(uris, " ") != strings.Join(want, " ") {
			t.Fatalf("resources = %v, want %v", uris, want)
		}
		for _, uri := range want {
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].URI != uri || !strings.HasPrefix(rr.Contents[0].Text, "# ") {
				t.Fatalf("%s: contents = %+v", uri, rr.Contents)
			}
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "airlock://runbooks/azure"}); err == nil {
			t.Fatal("an unknown runbook was read")
		}
	})
}

func TestCloudOpsInstructions(t *testing.T) {
	allow := &recordingBroker{decide: func(api.Request) api.Decision { return api.Decision{Verdict: api.Allow} }}
	for _, c := range []struct {
		posture string
		want    bool
	}{{"", false}, {"cloudops", true}} {
		cs := connect(t, Options{Policy: testPolicy(t, t.TempDir()), Broker: allow, Department: "infra", Posture: c.posture})
		got := cs.InitializeResult().Instructions
		if !strings.Contains(got, "ops_plan → ops_diff → ops_approve → ops_apply → ops_verify") {
			t.Errorf("posture %q: instructions lack the ops flow: %q", c.posture, got)
		}
		if strings.Contains(got, cloudOpsPosture()) != c.want {
			t.Errorf("posture %q: instructions carry the Cloud Ops posture = %v, want %v", c.posture, !c.want, c.want)
		}
	}
}

// TestRunbookCommands holds the runbooks to Airlock's classifiers: every fenced command
// an agent may copy does what its block says (cloudops/runbooks/README.md).
func TestRunbookCommands(t *testing.T) {
	seen := map[string]int{}
	for _, rb := range runbooks() {
		for _, b := range fencedBlocks(rb.Text) {
			for _, line := range b.lines {
				seen[rb.Provider+" "+b.kind]++
				destructive := false
				for _, f := range preflight.Classify(line) {
					destructive = destructive || preflight.FindingDestructive(f)
				}
				switch b.kind {
				case "readonly", "diff":
					if destructive {
						t.Errorf("%s %s: %q is classified destructive: %v", rb.Provider, b.kind, line, preflight.Classify(line))
					}
				case "verify":
					if _, err := ops.ParseReadOnlyCommand(line); err != nil {
						t.Errorf("%s verify: %q is refused by the verify allowlist: %v", rb.Provider, line, err)
					}
					if destructive {
						t.Errorf("%s verify: %q is classified destructive", rb.Provider, line)
					}
				case "destructive":
					if !destructive {
						t.Errorf("%s destructive: %q is not classified destructive", rb.Provider, line)
					}
				default:
					t.Errorf("%s: fenced block %q: use readonly, diff, verify or destructive", rb.Provider, b.kind)
				}
			}
		}
	}
	for _, p := range cloudOpsProviders {
		for _, kind := range []string{"readonly", "diff", "verify", "destructive"} {
			if seen[p+" "+kind] == 0 {
				t.Errorf("runbook %s has no %s command", p, kind)
			}
		}
	}
}

type fenced struct {
	kind  string
	lines []string
}

// fencedBlocks returns a markdown text's fenced code blocks, with their info string.
func fencedBlocks(text string) []fenced {
	var out []fenced
	var cur *fenced
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fenced{kind: strings.TrimPrefix(line, "```")}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil && strings.TrimSpace(line) != "":
			cur.lines = append(cur.lines, line)
		}
	}
	return out
}

func promptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("prompt %s %v: %v", name, args, err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompt %s: messages = %+v", name, res.Messages)
	}
	return res.Messages[0].Content.(*mcp.TextContent).Text
}
