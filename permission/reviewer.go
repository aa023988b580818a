package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ReviewInput is the JSON the auto reviewer reads on stdin.
type ReviewInput struct {
	Tool    string          `json:"tool"`
	Params  json.RawMessage `json:"params"`
	Tier    Tier            `json:"tier"`
	Reasons []string        `json:"reasons,omitempty"`
	Context Context         `json:"context"`
}

// ReviewOutput is the JSON the auto reviewer prints: decision allow|deny, risk
// low|medium|high|critical, and a rationale.
type ReviewOutput struct {
	Decision  string `json:"decision"`
	Risk      string `json:"risk"`
	Rationale string `json:"rationale"`
}

// Reviewer runs the configured auto_review command.
type Reviewer struct {
	Command []string
	Timeout time.Duration
}

// Review asks the reviewer. Any failure (crash, timeout, silence, invalid answer) is an
// error: the caller then falls back to the person.
func (r Reviewer) Review(ctx context.Context, in ReviewInput) (ReviewOutput, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return ReviewOutput{}, fmt.Errorf("encode review input: %w", err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultReviewerTimeout
	}
	out, err := runExternal(ctx, r.Command, body, timeout)
	if err != nil {
		return ReviewOutput{}, fmt.Errorf("reviewer: %w", err)
	}
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return ReviewOutput{}, fmt.Errorf("reviewer %s printed nothing", r.Command[0])
	}
	var ro ReviewOutput
	if err := json.Unmarshal(out, &ro); err != nil {
		return ReviewOutput{}, fmt.Errorf("reviewer %s printed invalid JSON: %w", r.Command[0], err)
	}
	ro.Decision = strings.ToLower(strings.TrimSpace(ro.Decision))
	ro.Risk = strings.ToLower(strings.TrimSpace(ro.Risk))
	if ro.Decision != "allow" && ro.Decision != "deny" {
		return ReviewOutput{}, fmt.Errorf("reviewer %s answered decision %q (want allow or deny)", r.Command[0], ro.Decision)
	}
	switch ro.Risk {
	case "low", "medium", "high", "critical":
	default:
		return ReviewOutput{}, fmt.Errorf("reviewer %s answered risk %q (want low, medium, high or critical)", r.Command[0], ro.Risk)
	}
	return ro, nil
}
