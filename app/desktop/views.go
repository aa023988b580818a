package desktop

import (
	"bytes"
	"encoding/json"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// approvalView is how the window lists a request waiting for a person (api.Approval):
// its parameters redacted and indented, what allowing an escalation gives in words.
func approvalView(p api.PendingRequest) api.Approval {
	c := p.Request.Context
	reasons := p.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	scopes := []string{}
	for _, s := range p.Scopes {
		scopes = append(scopes, string(s))
	}
	return api.Approval{
		ID: p.ID, Tool: p.Request.Tool, Summary: p.Summary, Tier: string(p.Tier), Kind: string(p.Kind),
		InteractiveOnly: p.InteractiveOnly, Reasons: reasons, Scopes: scopes, Params: indentParams(redactedParams(p.Request.Params)), CreatedAt: p.CreatedAt, Deadline: p.Deadline,
		Session: c.Session, Run: c.Run, Task: c.Task, Department: c.Department, Cwd: c.Cwd,
		Mode: c.Policy.Mode, Network: c.Policy.Network, Gives: gives(p),
	}
}

func gives(p api.PendingRequest) string {
	if p.Grant == nil || p.Grant.IsZero() {
		return ""
	}
	return p.Grant.String()
}

// redactedParams hides the credentials in the parameters, keeping them valid JSON.
func redactedParams(raw json.RawMessage) json.RawMessage {
	if b, err := redact.RawJSON(raw); err == nil {
		return b
	}
	return json.RawMessage(redact.String(string(raw)))
}

// indentParams shows raw JSON parameters indented; text that is not JSON is shown as it is.
func indentParams(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	return out.String()
}
