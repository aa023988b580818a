// Package permission owns the decision on every tool call: tiers, rules, the
// dangerous-command preflight, hooks, approval policies, the reviewer, the approval
// broker, remembered grants and the audit of every decision.
//
// A Request (tool, params, context) goes through these steps in order: the sandbox's
// isolation verdict (Isolation; a denial becomes an interactive-only
// isolation_escalation), beforeToolUse hooks (block, rewrite, elevate; failure blocks),
// the preflight classifier for shell commands (package preflight: bash_destructive and
// self_approval are interactive-only; ops.strict denies destructive commands), rules (any
// deny wins, else the last allow/ask), the tier with task and remembered grants, the
// approval policy (untrusted, on-request, on-failure, never), and the reviewer
// (auto_review). What still asks waits in the Broker for a person's Answer; every
// decision lands in the audit table. Interactive-only requests are only ever allowed by
// an Answer with Interactive set, from the window or a TTY.
//
// Entry points: Resolve (configuration), Migrate, NewBroker, Broker.Await,
// Broker.Pending, Broker.Answer, Broker.Check, Broker.Grants,
// Broker.Audit, Broker.AfterToolUse.
package permission
