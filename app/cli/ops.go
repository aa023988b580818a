package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// newOpsCmd is the plan → diff → approve → apply → verify → journal path.
func newOpsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ops",
		Short: "Change live infrastructure: plan → diff → approve → apply → verify → journal",
		Long: "The only authorized path for a change that git revert cannot undo. A plan names the exact command;\n" +
			"a diff shows what it will change; a person approves the plan's hash at a terminal or in the window and\n" +
			"gets a single-use token (valid 10 minutes); apply redeems it before anything runs; verify checks the\n" +
			"result read-only; every step lands in a hash-chained, keyring-authenticated journal.",
	}
	cmd.AddCommand(opsPlanCmd(e), opsDiffCmd(e), opsApproveCmd(e), opsApplyCmd(e), opsVerifyCmd(e),
		opsShowCmd(e), opsListCmd(e), opsRejectCmd(e), opsJournalCmd(e))
	return cmd
}

func opsPlanCmd(e *env) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "plan --file plan.json",
		Short: "Open a plan from a JSON file (relative paths in it are relative to the file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("give the plan with --file plan.json")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("read plan: %w", err)
			}
			abs, err := filepath.Abs(file)
			if err != nil {
				return err
			}
			body := api.PlanSubmission{Data: string(data), BaseDir: filepath.Dir(abs), By: "cli"}
			return printRoute(cmd.Context(), e, api.OpsCreatePlan, body, func(w io.Writer, p *api.PlanView) {
				fmt.Fprintf(w, "plan %s opened (%s)\nhash %s\nnext: airlock ops diff %s --run\n", p.ID, p.Status, p.Hash, p.ID)
			})
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "the plan, as JSON")
	return cmd
}

func opsDiffCmd(e *env) *cobra.Command {
	var run bool
	var file string
	cmd := &cobra.Command{
		Use:   "diff PLAN (--run | --file F)",
		Short: "Attach the machine-checkable diff: run the plan's diff command read-only, or attach a file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == (file != "") {
				return errors.New("say how to get the diff: --run (the plan's diff command, read-only) or --file F")
			}
			body := api.DiffInput{Run: run, By: "cli"}
			if file != "" {
				abs, err := filepath.Abs(file)
				if err != nil {
					return err
				}
				body.File = abs
			}
			return printRoute(cmd.Context(), e, api.OpsDiff, body, func(w io.Writer, r *api.DiffResult) {
				if d := r.Diff; d != nil {
					fmt.Fprintf(w, "%s\n", d.Content)
					fmt.Fprintf(w, "diff attached (sha256 %s); plan %s is %s\nnext: airlock ops approve %s\n", d.SHA256, r.PlanID, r.Status, r.PlanID)
				}
			}, args[0])
		},
	}
	cmd.Flags().BoolVar(&run, "run", false, "run the plan's diff command, read-only")
	cmd.Flags().StringVar(&file, "file", "", "attach this file as the diff")
	return cmd
}

func opsApproveCmd(e *env) *cobra.Command {
	var ttl string
	cmd := &cobra.Command{
		Use:   "approve PLAN [--ttl 10m]",
		Short: "Approve a plan at a terminal: shows the hash and the exact change, asks you to type the hash's first characters, prints the single-use token once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := api.ParseTokenTTL(ttl); err != nil {
				return fmt.Errorf("%w (--ttl)", err)
			}
			prompt, err := call(cmd.Context(), e, api.OpsApprovalPrompt, api.None{}, args[0])
			if err != nil {
				return err
			}
			typed, err := confirmPlanOnTTY(prompt)
			if err != nil {
				return err
			}
			pw, err := passwordOnTTY(cmd.Context(), e, "approving a plan", "approve it in the Airlock window")
			if err != nil {
				return err
			}
			body := api.ApproveBody{TTL: ttl, ConfirmHashPrefix: typed, Proof: api.Proof{Password: pw}}
			return printRoute(cmd.Context(), e, api.OpsApprove, body, func(w io.Writer, r *api.ApproveResult) {
				fmt.Fprintf(w, "approved plan %s (hash %s)\n\n  token: %s\n\nIt is shown only this once, is valid until %s, and works once:\n  airlock ops apply %s --token %s\n",
					r.PlanID, r.PlanHash, r.Token, r.ExpiresAt.Format(time.RFC3339Nano), r.PlanID, r.Token)
			}, args[0])
		},
	}
	cmd.Flags().StringVar(&ttl, "ttl", "", "how long the token stays valid (default 10m, from 10s to 60m)")
	return cmd
}

// confirmPlanOnTTY shows what is being approved on the terminal and reads the typed
// hash prefix from it.
func confirmPlanOnTTY(p *api.ApprovalPrompt) (string, error) {
	tty, err := openTerminal("approving a plan", "approve it in the Airlock window")
	if err != nil {
		return "", err
	}
	defer tty.Close()
	fmt.Fprintf(tty, "\nPlan %s — %s\n", p.PlanID, p.Intent)
	fmt.Fprintf(tty, "  hash      %s\n  command   %s\n", p.Hash, p.ApplyCommand)
	if p.SnapshotCommand != "" {
		fmt.Fprintf(tty, "  snapshot  %s\n", p.SnapshotCommand)
	}
	if p.ConfirmCommand != "" {
		fmt.Fprintf(tty, "  confirm   %s (sent by verify only when every assertion passes within %ds of the apply; else the device rolls back)\n",
			p.ConfirmCommand, p.ConfirmWithinSeconds)
	}
	fmt.Fprintf(tty, "  workdir   %s\n  network   %t\n  worst     blast radius %s, %s\n", p.Workdir, p.Network, p.WorstBlastRadius, p.WorstReversibility)
	for i, s := range p.Steps {
		fmt.Fprintf(tty, "  step %d    %s (%s, %s, blast %s)\n", i+1, s.Description, s.Effect, s.Reversibility, s.BlastRadius)
	}
	if d := p.Diff; d != nil {
		fmt.Fprintf(tty, "\n--- diff (sha256 %s) ---\n%s\n--- end of diff ---\n", d.SHA256, d.Content)
	}
	if len(p.Hash) < 8 {
		return "", errors.New("the plan has no hash to confirm")
	}
	fmt.Fprintf(tty, "\nTo approve exactly this, type the hash's first 8 characters (%s…) and press Enter: ", p.Hash[:4])
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil {
		return "", errors.New("no confirmation typed: nothing was approved")
	}
	return strings.TrimSpace(line), nil
}

func opsApplyCmd(e *env) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "apply PLAN --token T",
		Short: "Apply an approved plan: the token is redeemed before anything runs, and never given back",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if token == "" {
				return errors.New("give the approval token with --token (it was printed once by `airlock ops approve`)")
			}
			body := api.ApplyInput{Token: token, ApplyOptions: api.ApplyOptions{By: "cli"}}
			return applyLost(cmd.Context(), args[0], printRoute(cmd.Context(), e, api.OpsApply, body, func(w io.Writer, r *api.ApplyResult) {
				artifact := func(label string, a *api.PlanArtifactView) {
					if a != nil {
						fmt.Fprintf(w, "%-16s sha256 %s…  %s\n", label, short(a.SHA256, 8), oneLine(a.Content, 80))
					}
				}
				artifact("snapshot before", r.SnapshotBefore)
				fmt.Fprintf(w, "%-16s exit %d in %s\n", "apply", r.ExitCode, r.Duration.Round(time.Millisecond))
				if r.Output != nil && r.Output.Content != "" {
					fmt.Fprintf(w, "%s\n", r.Output.Content)
				}
				artifact("snapshot after", r.SnapshotAfter)
				if r.Reason != "" {
					fmt.Fprintf(w, "reason: %s\n", r.Reason)
				}
				fmt.Fprintf(w, "plan %s is %s\n", r.PlanID, r.Status)
				if r.Status == api.PlanApplied {
					fmt.Fprintf(w, "next: airlock ops verify %s\n", r.PlanID)
				}
			}, args[0]))
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the single-use approval token")
	return cmd
}

// applyLost says what an apply's error means when the core stopped answering once the
// request was sent (it died mid-apply): the outcome is unknown, and the next start
// records the plan failed. A refusal, no core at all, or the person's interrupt is err.
func applyLost(ctx context.Context, planID string, err error) error {
	var refused *api.Error
	var notRunning *localapi.NotRunningError
	if err == nil || ctx.Err() != nil || errors.As(err, &refused) || errors.As(err, &notRunning) {
		return err
	}
	return fmt.Errorf("%w\nthe core stopped answering during the apply of plan %s, so its outcome is unknown: start Airlock again "+
		"(the app, or `airlock daemon`), which records the plan failed (outcome unknown); then inspect the target and "+
		"attach a fresh diff (airlock ops diff %s --run) to approve it again, or reject it (airlock ops reject %s --reason R)", err, planID, planID, planID)
}

func opsVerifyCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "verify PLAN",
		Short: "Run the plan's read-only assertions and record the evidence",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.OpsVerify, api.VerifyInput{By: "cli"}, func(w io.Writer, r *api.VerifyResult) {
				tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
				for _, a := range r.Assertions {
					mark := "✗"
					if a.Passed {
						mark = "✓"
					}
					line := fmt.Sprintf("%s %s\t%s\t→ %s", mark, a.Name, a.Command, oneLine(a.Output, 60))
					if a.Reason != "" && !a.Passed {
						line += "  (" + a.Reason + ")"
					}
					fmt.Fprintln(tw, line)
				}
				tw.Flush()
				if c := r.Confirm; c != nil {
					switch c.Outcome {
					case api.ConfirmSent:
						fmt.Fprintf(w, "confirmed  %s  exit 0  → %s\n", c.Command, oneLine(c.Output, 60))
					default:
						fmt.Fprintf(w, "%s  %s  (%s)\n", strings.ReplaceAll(string(c.Outcome), "_", " "), c.Command, c.Reason)
					}
				}
				fmt.Fprintf(w, "plan %s is %s\n", r.PlanID, r.Status)
			}, args[0])
		},
	}
}

func opsShowCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "show PLAN",
		Short: "Show a plan: status, hash, steps, diff, token state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.OpsGetPlan, api.None{}, func(w io.Writer, p *api.PlanView) {
				fmt.Fprintf(w, "plan     %s (%s)\nhash     %s\nintent   %s\nintact   %t\n", p.ID, p.Status, p.Hash, p.Plan.Intent, p.Intact)
				if !p.Plan.Confirm.IsZero() {
					fmt.Fprintf(w, "confirm  %s (commit-confirm: sent by the first verify only when every assertion passes within %ds of the apply)\n",
						p.Plan.Confirm.String(), p.Plan.ConfirmWithinSeconds)
				}
				if t := p.Token; t != nil {
					fmt.Fprintf(w, "token    approved by %s, expires %s, used %t, live %t\n", t.ApprovedBy, t.ExpiresAt.Format(time.RFC3339Nano), t.Used, t.Live)
				}
				if d := p.Diff; d != nil {
					fmt.Fprintf(w, "diff     sha256 %s\n%s\n", d.SHA256, d.Content)
				}
			}, args[0])
		},
	}
}

func opsListCmd(e *env) *cobra.Command {
	var project, status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List plans",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filter := api.PlanFilter{Project: project, Status: api.PlanStatus(status)}
			return printRoute(cmd.Context(), e, api.OpsListPlans, filter, func(w io.Writer, list []api.PlanSummary) {
				printTable(w, list, "No plans yet: open one with `airlock ops plan --file plan.json`.", []string{"ID", "STATUS", "TARGET", "INTENT"}, func(p api.PlanSummary) []any {
					return []any{p.ID, p.Status, p.Provider, p.Intent}
				})
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "only this project")
	cmd.Flags().StringVar(&status, "status", "", "only plans with this status")
	return cmd
}

func opsRejectCmd(e *env) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reject PLAN --reason R",
		Short: "Reject a plan (journaled)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.OpsReject, api.RejectBody{Reason: reason}, func(w io.Writer, p *api.PlanView) {
				fmt.Fprintf(w, "plan %s: %s\n", p.ID, p.Status)
			}, args[0])
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	return cmd
}

func opsJournalCmd(e *env) *cobra.Command {
	var project, plan, status string
	var verify bool
	cmd := &cobra.Command{
		Use:   "journal [--plan P] [--status S] [--verify]",
		Short: "Show the project's journal; --verify checks its chain and signatures and names any edited, deleted, inserted or reordered entry",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" && plan == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				if real, err := filepath.EvalSymlinks(wd); err == nil {
					wd = real
				}
				project = "dir:" + wd
			}
			in := api.JournalInput{Project: project, PlanID: plan, Status: api.PlanStatus(status), Verify: verify}
			var broken bool
			err := printRoute(cmd.Context(), e, api.OpsJournal, in, func(w io.Writer, j *api.JournalPage) {
				printTable(w, j.Entries, "", []string{"seq", "event", "status", "actor", "detail"}, func(x api.JournalEntryView) []any {
					return []any{x.Seq, x.Event, x.Status, x.Actor, oneLine(detailText(x.Detail), 70)}
				})
				summary := fmt.Sprintf("journal of %s: %d entries", j.Project, len(j.Entries))
				if v := j.Verification; v != nil {
					// The verified count is the whole journal's, not the page listed; the
					// anchor outside the database says how many there should be.
					summary = fmt.Sprintf("journal of %s: %d entries", j.Project, v.Entries)
					if v.Expected > v.Entries {
						summary += fmt.Sprintf(" (%d expected: the journal was truncated)", v.Expected)
					}
					for _, p := range v.Problems {
						fmt.Fprintf(w, "%s: seq %d: %s\n", p.Kind, p.Seq, p.Detail)
					}
					if v.OK {
						summary += ", chain and signatures OK"
					} else {
						broken = true
						summary += fmt.Sprintf(", %d problem(s)", len(v.Problems))
					}
				}
				fmt.Fprintln(w, summary)
			})
			if err == nil && broken {
				return &exitError{code: ExitError, err: errors.New("the journal failed verification")}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the project (default: dir:<current directory>)")
	cmd.Flags().StringVar(&plan, "plan", "", "only this plan's entries")
	cmd.Flags().StringVar(&status, "status", "", "only entries with this plan status")
	cmd.Flags().BoolVar(&verify, "verify", false, "verify the chain and the signatures")
	return cmd
}

// detailText is a journal entry's detail on one line, its keys sorted (the detail is a
// free-form JSON object of the event's own fields).
func detailText(raw json.RawMessage) string {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

// short returns the first n characters of s.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// oneLine folds s onto one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
