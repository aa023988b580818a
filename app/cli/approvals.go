package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/spf13/cobra"
)

func newApprovalsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "approvals", Short: "List and answer the requests waiting for a person"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List pending requests, most urgent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.ListApprovals, api.None{}, func(w io.Writer, list []api.PendingRequest) {
				printTable(w, list, "Nothing is waiting for you.", []string{"ID", "TIER", "WHAT", "WAITING"}, func(p api.PendingRequest) []any {
					what := p.Summary
					if p.InteractiveOnly {
						what += "  [needs a person]"
					}
					return []any{p.ID, p.Tier, what, time.Since(p.CreatedAt).Round(time.Second)}
				})
			})
		},
	})
	var once, session, task, department, always bool
	var scopeName string
	allow := &cobra.Command{
		Use:   "allow ID",
		Short: "Allow a pending request (P1: remembered for its session unless --once, --task, --department or --always; P2 and interactive-only: once, after a typed confirmation on a terminal)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// No flag: the broker's default, which remembers a P1 for the rest of its
			// session (it asks the first time only) and allows anything else once.
			scope := api.Scope(scopeName)
			for _, f := range []struct {
				set bool
				s   api.Scope
			}{{once, api.ScopeOnce}, {session, api.ScopeSession}, {task, api.ScopeTask}, {department, api.ScopeDepartment}, {always, api.ScopeAlways}} {
				if f.set {
					scope = f.s
				}
			}
			switch scope {
			case "", api.ScopeOnce, api.ScopeSession, api.ScopeTask, api.ScopeDepartment, api.ScopeAlways:
			default:
				return fmt.Errorf("--scope %q: want once, session, task, department or always (`airlock approvals list --json` shows the scopes each request offers)", scopeName)
			}
			return answer(cmd.Context(), e, args[0], true, string(scope), "")
		},
	}
	allow.Flags().BoolVar(&once, "once", false, "allow this request only")
	allow.Flags().BoolVar(&session, "session", false, "allow it and the same call for the rest of this session (the default for a P1 of a session)")
	allow.Flags().BoolVar(&task, "task", false, "allow it and the same call in every later run of this request's task, and no other (P1 only)")
	allow.Flags().BoolVar(&department, "department", false, "allow it and the same call for every task and session of this request's department (P1 only)")
	allow.Flags().BoolVar(&always, "always", false, "allow it and the same call from now on, in this department or workspace (P1 only)")
	allow.Flags().StringVar(&scopeName, "scope", "", "the same choice by name: once, session, task, department or always")
	allow.MarkFlagsMutuallyExclusive("once", "session", "task", "department", "always", "scope")
	var reason string
	deny := &cobra.Command{
		Use:   "deny ID",
		Short: "Deny a pending request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return answer(cmd.Context(), e, args[0], false, "", reason)
		},
	}
	deny.Flags().StringVar(&reason, "reason", "", "why (shown to the agent)")
	cmd.AddCommand(allow, deny, newApprovalsWatchCmd(e))
	return cmd
}

// newApprovalsWatchCmd follows the requests as they are raised and decided. While it
// runs, a person at this terminal counts as someone who can answer: a hook that would
// answer at once when nothing follows Airlock's approvals waits for them instead.
func newApprovalsWatchCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "watch",
		Short: "Follow the requests that need you as they come (Ctrl-C stops); answer them with allow or deny",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			events, err := c.Events(cmd.Context(), api.TopicPermissionRequested, api.TopicPermissionDecided)
			if err != nil {
				return err
			}
			list, err := pendingApprovals(cmd.Context(), e)
			if err != nil {
				return err
			}
			if !e.json {
				fmt.Fprintf(e.stdout, "Watching for requests that need you (%d waiting); answer with `airlock approvals allow|deny ID`.\n", len(list))
			}
			for _, p := range list {
				watchLine(e, api.PermissionRequested{ID: p.ID, Tool: p.Request.Tool, Summary: p.Summary, Tier: string(p.Tier), InteractiveOnly: p.InteractiveOnly})
			}
			for ev := range events {
				switch ev.Topic {
				case api.TopicPermissionRequested:
					var p api.PermissionRequested
					if json.Unmarshal(ev.Payload, &p) == nil {
						watchLine(e, p)
					}
				case api.TopicPermissionDecided:
					var d api.PermissionDecided
					if json.Unmarshal(ev.Payload, &d) == nil && !e.json {
						fmt.Fprintf(e.stdout, "%s  decided: %s (%s) — %s\n", d.ID, d.Verdict, d.Layer, d.Summary)
					} else if e.json {
						_ = e.print(ev, nil)
					}
				}
			}
			if cmd.Context().Err() != nil {
				return nil
			}
			return errors.New("the Airlock core stopped; run `airlock approvals watch` again once it runs")
		},
	}
}

// watchLine prints one request that waits for the person.
func watchLine(e *env, p api.PermissionRequested) {
	_ = e.print(p, func(w io.Writer) {
		what := p.Summary
		if p.InteractiveOnly {
			what += "  [needs a person]"
		}
		fmt.Fprintf(w, "%s  %s  %s\n", p.ID, p.Tier, what)
	})
}

func pendingApprovals(ctx context.Context, e *env) ([]api.PendingRequest, error) {
	return call(ctx, e, api.ListApprovals, api.None{})
}

func answer(ctx context.Context, e *env, id string, allow bool, scope, reason string) error {
	list, err := pendingApprovals(ctx, e)
	if err != nil {
		return err
	}
	var p *api.PendingRequest
	for i := range list {
		if list[i].ID == id || (len(id) >= 6 && strings.HasPrefix(list[i].ID, id)) {
			if p != nil {
				return fmt.Errorf("%q matches more than one pending request: give more of the id", id)
			}
			p = &list[i]
		}
	}
	if p == nil {
		return fmt.Errorf("no pending request %s (answered elsewhere, or expired): see `airlock approvals list`", id)
	}
	// Who answers is the core's fact, from how the answer arrives: this body names no
	// surface. What needs a person (P2, interactive-only, a task, department or always grant) goes with
	// the person's proof, typed at this terminal.
	in := api.AnswerIn{Allow: allow, Scope: api.Scope(scope), Reason: reason}
	// Every scope but once and session outlives the session: a person's answer.
	remembered := scope != "" && scope != string(api.ScopeOnce) && scope != string(api.ScopeSession)
	if allow && (p.InteractiveOnly || p.Tier == "P2" || remembered) {
		proof, err := proveOnTTY(ctx, e, p)
		if err != nil {
			return err
		}
		in.Proof = proof
	}
	d, err := call(ctx, e, api.AnswerApproval, in, p.ID)
	if err != nil {
		return err
	}
	return e.print(d, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s (%s", p.ID, d.Verdict, d.Tier)
		if d.Scope != "" && d.Verdict == api.Allow {
			fmt.Fprintf(w, ", %s", d.Scope)
		}
		fmt.Fprintf(w, ") — %s\n", p.Summary)
	})
}

// proveOnTTY shows the request on the controlling terminal and asks the person to
// prove they are there: their login password, which the core checks with PAM
// (terminal_proof = "os"), or — under the weaker "tty" — the request id's first
// characters. Without a terminal it refuses: no script answers for a person.
func proveOnTTY(ctx context.Context, e *env, p *api.PendingRequest) (api.Proof, error) {
	const window = "answer it in the Airlock window"
	proof, err := terminalProof(ctx, e)
	if err != nil {
		return api.Proof{}, err
	}
	tty, err := openTerminal("this request", window)
	if err != nil {
		return api.Proof{}, err
	}
	defer tty.Close()
	fmt.Fprintf(tty, "\n  %s  %s\n", p.Tier, p.Summary)
	for _, r := range p.Reasons {
		fmt.Fprintf(tty, "  why: %s\n", r)
	}
	if proof.TerminalProof != "tty" {
		tty.Close()
		pw, err := passwordOnTTY(ctx, e, "this request", window)
		if err != nil {
			return api.Proof{}, err
		}
		return api.Proof{Password: pw}, nil
	}
	prefix := p.ID
	if len(prefix) > 8 {
		prefix = prefix[:8]
	}
	fmt.Fprintf(tty, "\n  To allow it, type %s and press Enter (anything else cancels): ", prefix)
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil {
		return api.Proof{}, errors.New("no confirmation typed: nothing was allowed")
	}
	line = strings.TrimSpace(line)
	if line != prefix {
		return api.Proof{}, errors.New("the confirmation did not match: nothing was allowed")
	}
	return api.Proof{Confirmation: line}, nil
}

func newGrantsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "grants", Short: "List and revoke remembered permissions"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List remembered grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.ListGrants, api.None{}, func(w io.Writer, list []api.GrantRecord) {
				printTable(w, list, "No remembered grants: every P1 request asks the first time.", []string{"ID", "TOOL", "PATTERN", "SCOPE", "WHERE"}, func(g api.GrantRecord) []any {
					where := firstNonEmpty(g.Department, g.Workspace, g.Session)
					if g.Task != "" {
						where = "task " + g.Task
					}
					return []any{g.ID, g.Tool, g.Pattern, g.Scope, where}
				})
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a remembered grant: the next such request asks again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.RevokeGrant, api.None{}, func(w io.Writer, _ api.Revoked) {
				fmt.Fprintf(w, "revoked %s\n", args[0])
			}, args[0])
		},
	})
	return cmd
}

func firstNonEmpty(vs ...string) string {
	for _, s := range vs {
		if s != "" {
			return s
		}
	}
	return "everywhere"
}

func newAuditCmd(e *env) *cobra.Command {
	var tool, run, verdict, since string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the decisions taken: who asked, what, which layer decided, how long the person took",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := api.AuditFilter{Tool: tool, Run: run, Verdict: api.Verdict(verdict), Since: since, Limit: max(limit, 0)}
			return printRoute(cmd.Context(), e, api.ListAudit, f, func(w io.Writer, recs []api.AuditRecord) {
				printTable(w, recs, "No decisions recorded yet.", []string{"WHEN", "TOOL", "TIER", "VERDICT", "LAYER", "BY", "RAN", "WHAT"}, func(r api.AuditRecord) []any {
					// As the time travels in JSON (RFC 3339 with nanoseconds).
					return []any{r.CreatedAt.Format(time.RFC3339Nano), r.Tool, r.Tier, r.Verdict, r.Layer, r.AnsweredBy, ranText(r), r.Subject}
				})
			})
		},
	}
	cmd.Flags().StringVar(&tool, "tool", "", "only this tool")
	cmd.Flags().StringVar(&run, "run", "", "only this run")
	cmd.Flags().StringVar(&verdict, "verdict", "", "only allow, ask or deny")
	cmd.Flags().StringVar(&since, "since", "", "only the last DURATION (for example 24h)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (default 200)")
	return cmd
}

// ranText is the audit's RAN column: what the caller reported came of the call.
func ranText(r api.AuditRecord) string {
	switch r.Ran {
	case "":
		return "-"
	case api.OutcomeFailed:
		if r.RanError != "" {
			return "failed: " + oneLine(r.RanError, 60)
		}
	}
	return r.Ran
}
