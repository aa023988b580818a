// Package permission owns the decision on every tool call: tiers, rules, the
// dangerous-command preflight, hooks, approval policies, the reviewer, the approval
// broker, remembered grants and the audit of every decision.
package permission
