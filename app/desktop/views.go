package desktop

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/redact"
)

// Approval is a request waiting for a person, as the window lists it and the popup shows
// it: a view of permission.PendingRequest with the parameters as indented JSON text, so
// the generated TypeScript stays exact.
type Approval struct {
	ID              string   `json:"id"`
	Tool            string   `json:"tool"`
	Summary         string   `json:"summary"`
	Tier            string   `json:"tier"` // P0 | P1 | P2
	Kind            string   `json:"kind,omitempty"`
	InteractiveOnly bool     `json:"interactiveOnly"`
	Reasons         []string `json:"reasons"`
	// Scopes are the scopes an allow may choose: once for P2 and interactive-only
	// requests; once, session and always for P1.
	Scopes []string `json:"scopes"`
	// Params are the tool's parameters as indented JSON ("" when there are none).
	Params    string     `json:"params"`
	CreatedAt time.Time  `json:"createdAt"`
	Deadline  *time.Time `json:"deadline,omitempty"`
	// Where it comes from and where it would act.
	Session    string `json:"session,omitempty"`
	Run        string `json:"run,omitempty"`
	Task       string `json:"task,omitempty"`
	Department string `json:"department,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Network    bool   `json:"network"`
	// Gives is what allowing an isolation escalation gives, for that one call, in words
	// ("" for other requests).
	Gives string `json:"gives,omitempty"`
}

func approvalView(p permission.PendingRequest) Approval {
	c := p.Request.Context
	reasons := p.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	scopes := []string{}
	for _, s := range p.Scopes {
		scopes = append(scopes, string(s))
	}
	return Approval{
		ID: p.ID, Tool: p.Request.Tool, Summary: p.Summary, Tier: string(p.Tier), Kind: string(p.Kind),
		InteractiveOnly: p.InteractiveOnly, Reasons: reasons, Scopes: scopes, Params: indentParams(redactedParams(p.Request.Params)), CreatedAt: p.CreatedAt, Deadline: p.Deadline,
		Session: c.Session, Run: c.Run, Task: c.Task, Department: c.Department, Cwd: c.Cwd,
		Mode: c.Policy.Mode, Network: c.Policy.Network, Gives: gives(p),
	}
}

func gives(p permission.PendingRequest) string {
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
