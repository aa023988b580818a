package desktop

import (
	"time"

	"github.com/airlock-app/airlock/permission"
)

// Approval is a request waiting for a person, as the window lists it. It is a view of
// permission.PendingRequest without the raw parameters (the popup of issue #7 adds them),
// so the generated TypeScript stays exact.
type Approval struct {
	ID              string     `json:"id"`
	Tool            string     `json:"tool"`
	Summary         string     `json:"summary"`
	Tier            string     `json:"tier"` // P0 | P1 | P2
	Kind            string     `json:"kind,omitempty"`
	InteractiveOnly bool       `json:"interactiveOnly"`
	Reasons         []string   `json:"reasons"`
	CreatedAt       time.Time  `json:"createdAt"`
	Deadline        *time.Time `json:"deadline,omitempty"`
	// Where it comes from and where it would act.
	Session    string `json:"session,omitempty"`
	Run        string `json:"run,omitempty"`
	Task       string `json:"task,omitempty"`
	Department string `json:"department,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Network    bool   `json:"network"`
}

func approvalView(p permission.PendingRequest) Approval {
	c := p.Request.Context
	reasons := p.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return Approval{
		ID: p.ID, Tool: p.Request.Tool, Summary: p.Summary, Tier: string(p.Tier), Kind: string(p.Kind),
		InteractiveOnly: p.InteractiveOnly, Reasons: reasons, CreatedAt: p.CreatedAt, Deadline: p.Deadline,
		Session: c.Session, Run: c.Run, Task: c.Task, Department: c.Department, Cwd: c.Cwd,
		Mode: c.Policy.Mode, Network: c.Policy.Network,
	}
}
