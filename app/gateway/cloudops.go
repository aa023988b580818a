package gateway

import (
	"context"
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Cloud Ops posture and the providers' runbooks are markdown files shipped in the
// binary (cloudops/), written from the providers' public documentation. Every MCP client
// can list and read them (prompts and resources); a cloudops session also gets the
// posture in its initialize instructions.
//
//go:embed cloudops/posture.md cloudops/runbooks/*.md
var cloudopsFiles embed.FS

// postureURI and runbookURIPrefix name the Cloud Ops texts as MCP resources.
const (
	postureURI       = "airlock://cloudops/posture"
	runbookURIPrefix = "airlock://runbooks/"
)

// runbook is one provider's runbook: how to inspect it read-only, produce a
// machine-checkable diff, verify, and what cannot be undone.
type runbook struct {
	Provider string // aws, gcp, cloudflare, digitalocean, runpod, vyos, junos
	Title    string // the file's first heading
	Text     string
}

// URI is the runbook's resource URI.
func (r runbook) URI() string { return runbookURIPrefix + r.Provider }

// cloudOpsPosture is the Cloud Ops system prompt: read-only first, mutations only through
// ops_apply with a token a person approved, verify, then journal.
func cloudOpsPosture() string {
	b, err := cloudopsFiles.ReadFile("cloudops/posture.md")
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

// runbooks lists the shipped runbooks, sorted by provider.
func runbooks() []runbook {
	entries, err := cloudopsFiles.ReadDir("cloudops/runbooks")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []runbook
	for _, e := range entries {
		name := e.Name()
		if name == "README.md" || !strings.HasSuffix(name, ".md") {
			continue // the note for who edits them
		}
		b, err := cloudopsFiles.ReadFile(path.Join("cloudops/runbooks", name))
		if err != nil {
			panic(err)
		}
		text := string(b)
		title, _, _ := strings.Cut(text, "\n")
		out = append(out, runbook{Provider: strings.TrimSuffix(name, ".md"), Title: strings.TrimPrefix(title, "# "), Text: text})
	}
	slices.SortFunc(out, func(a, b runbook) int { return strings.Compare(a.Provider, b.Provider) })
	return out
}

// runbookFor returns the runbook of a provider.
func runbookFor(provider string) (runbook, bool) {
	p := strings.ToLower(strings.TrimSpace(provider))
	for _, r := range runbooks() {
		if r.Provider == p {
			return r, true
		}
	}
	return runbook{}, false
}

func runbookProviders() []string {
	var names []string
	for _, r := range runbooks() {
		names = append(names, r.Provider)
	}
	return names
}

// addCloudOps registers the posture and the runbooks as prompts and resources.
func (s *Server) addCloudOps() {
	providers := strings.Join(runbookProviders(), ", ")
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:  "cloudops",
		Title: "Cloud Ops posture",
		Description: "How to operate live infrastructure through Airlock: read-only first, plan, diff, a person approves, " +
			"apply only with ops_apply, verify, journal. With provider, the provider's runbook follows.",
		Arguments: []*mcp.PromptArgument{{Name: "provider", Description: "optional: one of " + providers}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text := cloudOpsPosture()
		if p := req.Params.Arguments["provider"]; p != "" {
			rb, err := runbookArg(p)
			if err != nil {
				return nil, err
			}
			text += "\n\n" + rb.Text
		}
		return promptResult("The Cloud Ops posture", text), nil
	})
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:        "runbook",
		Title:       "Provider runbook",
		Description: "One provider's runbook: inspect read-only, produce a machine-checkable diff, verify assertions, what is irreversible.",
		Arguments:   []*mcp.PromptArgument{{Name: "provider", Description: "one of " + providers, Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		rb, err := runbookArg(req.Params.Arguments["provider"])
		if err != nil {
			return nil, err
		}
		return promptResult(rb.Title, rb.Text), nil
	})
	s.mcp.AddResource(&mcp.Resource{
		URI: postureURI, Name: "cloudops-posture", Title: "Cloud Ops posture", MIMEType: "text/markdown",
		Description: "The Cloud Ops system prompt a cloudops department's sessions receive.",
	}, textResource(cloudOpsPosture()))
	for _, rb := range runbooks() {
		s.mcp.AddResource(&mcp.Resource{
			URI: rb.URI(), Name: "runbook-" + rb.Provider, Title: rb.Title, MIMEType: "text/markdown",
			Description: "How to inspect " + rb.Provider + " read-only, produce a machine-checkable diff, verify, and what is irreversible.",
		}, textResource(rb.Text))
	}
}

// runbookArg is the runbook a prompt argument names, or an error that lists the providers.
func runbookArg(provider string) (runbook, error) {
	if provider == "" {
		return runbook{}, fmt.Errorf("the provider argument is missing: give one of %s", strings.Join(runbookProviders(), ", "))
	}
	rb, ok := runbookFor(provider)
	if !ok {
		return runbook{}, fmt.Errorf("there is no runbook for %q: the providers are %s", provider, strings.Join(runbookProviders(), ", "))
	}
	return rb, nil
}

func promptResult(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description,
		Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

func textResource(text string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
	}
}

// instructions are the initialize instructions of a session: what every session is told,
// and for a cloudops session the posture after it.
func instructions(opts Options) string {
	base := "Airlock's governed tools. Every call is checked by Airlock's permission broker and may wait for the " +
		"person to approve it in the Airlock window; a refusal says what was blocked, why and what the person can change. " +
		"Files are confined to the workspace " + opts.Policy.Cwd + " (and the configured writable roots); bash runs in " +
		"Airlock's sandbox. Infrastructure changes go through ops_plan → ops_diff → ops_approve → ops_apply → ops_verify. " +
		"Provider runbooks: the runbook prompt, or the resources " + runbookURIPrefix + "<provider>."
	if opts.Posture == postureCloudOps {
		return base + "\n\nThis session works under the Cloud Ops posture (" + postureURI + "):\n\n" + cloudOpsPosture()
	}
	return base
}

// postureCloudOps is the posture whose sessions get the Cloud Ops prompt (the core's
// permission.PostureCloudOps; this package links no domain package).
const postureCloudOps = "cloudops"
