package permission

import "context"

// Isolation is the sandbox's application-layer verdict on a request (DESIGN.md §5 step
// 1). Check returns nil when the sandbox policy allows the call, or an error (the
// sandbox's *IsolationDeniedError) naming what it denies and the way out. A denial
// becomes an interactive-only isolation_escalation request; under approval_policy
// never it is denied at once.
type Isolation interface {
	Check(ctx context.Context, req Request) error
}

// IsolationFunc adapts a function to Isolation.
type IsolationFunc func(ctx context.Context, req Request) error

// Check calls f.
func (f IsolationFunc) Check(ctx context.Context, req Request) error { return f(ctx, req) }
