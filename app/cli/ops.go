package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
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

// opsCall sends one request and prints the answer: JSON under --json, else human.
func opsCall(ctx context.Context, e *env, method, path string, in any, human func(io.Writer, map[string]any)) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.Do(ctx, method, path, in, &raw); err != nil {
		return err
	}
	if e.json {
		_, err := fmt.Fprintln(e.stdout, string(raw))
		return err
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	human(e.stdout, m)
	return nil
}

func planPath(id string) string { return "/v1/ops/plans/" + url.PathEscape(id) }

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
			body := map[string]string{"data": string(data), "baseDir": filepath.Dir(abs), "by": "cli"}
			return opsCall(cmd.Context(), e, "POST", "/v1/ops/plans", body, func(w io.Writer, m map[string]any) {
				fmt.Fprintf(w, "plan %v opened (%v)\nhash %v\nnext: airlock ops diff %v --run\n", m["id"], m["status"], m["hash"], m["id"])
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
			body := map[string]any{"run": run, "by": "cli"}
			if file != "" {
				abs, err := filepath.Abs(file)
				if err != nil {
					return err
				}
				body["file"] = abs
			}
			return opsCall(cmd.Context(), e, "POST", planPath(args[0])+"/diff", body, func(w io.Writer, m map[string]any) {
				if d, ok := m["diff"].(map[string]any); ok {
					fmt.Fprintf(w, "%v\n", d["content"])
					fmt.Fprintf(w, "diff attached (sha256 %v); plan %v is %v\nnext: airlock ops approve %v\n", d["sha256"], m["plan_id"], m["status"], m["plan_id"])
				}
			})
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
			c, err := e.client()
			if err != nil {
				return err
			}
			var prompt map[string]any
			if err := c.Do(cmd.Context(), "GET", planPath(args[0])+"/approval", nil, &prompt); err != nil {
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
			body := map[string]string{"ttl": ttl, "confirmHashPrefix": typed, "password": pw}
			return opsCall(cmd.Context(), e, "POST", planPath(args[0])+"/approve", body, func(w io.Writer, m map[string]any) {
				fmt.Fprintf(w, "approved plan %v (hash %v)\n\n  token: %v\n\nIt is shown only this once, is valid until %v, and works once:\n  airlock ops apply %v --token %v\n",
					m["plan_id"], m["plan_hash"], m["token"], m["expires_at"], m["plan_id"], m["token"])
			})
		},
	}
	cmd.Flags().StringVar(&ttl, "ttl", "", "how long the token stays valid (default 10m, at most 60m)")
	return cmd
}

// confirmPlanOnTTY shows what is being approved on the terminal and reads the typed
// hash prefix from it.
func confirmPlanOnTTY(p map[string]any) (string, error) {
	tty, err := openTerminal("approving a plan", "approve it in the Airlock window")
	if err != nil {
		return "", err
	}
	defer tty.Close()
	hash, _ := p["hash"].(string)
	fmt.Fprintf(tty, "\nPlan %v — %v\n", p["plan_id"], p["intent"])
	fmt.Fprintf(tty, "  hash      %s\n  command   %v\n", hash, p["apply_command"])
	if s, ok := p["snapshot_command"].(string); ok && s != "" {
		fmt.Fprintf(tty, "  snapshot  %s\n", s)
	}
	fmt.Fprintf(tty, "  workdir   %v\n  network   %v\n  worst     blast radius %v, %v\n", p["workdir"], p["network"], p["worst_blast_radius"], p["worst_reversibility"])
	if steps, ok := p["steps"].([]any); ok {
		for i, s := range steps {
			if m, ok := s.(map[string]any); ok {
				fmt.Fprintf(tty, "  step %d    %v (%v, %v, blast %v)\n", i+1, m["description"], m["effect"], m["reversibility"], m["blast_radius"])
			}
		}
	}
	if d, ok := p["diff"].(map[string]any); ok {
		fmt.Fprintf(tty, "\n--- diff (sha256 %v) ---\n%v\n--- end of diff ---\n", d["sha256"], d["content"])
	}
	if len(hash) < 8 {
		return "", errors.New("the plan has no hash to confirm")
	}
	fmt.Fprintf(tty, "\nTo approve exactly this, type the hash's first 8 characters (%s…) and press Enter: ", hash[:4])
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
			body := map[string]any{"token": token, "by": "cli"}
			return opsCall(cmd.Context(), e, "POST", planPath(args[0])+"/apply", body, func(w io.Writer, m map[string]any) {
				artifact := func(label string, v any) {
					if a, ok := v.(map[string]any); ok {
						fmt.Fprintf(w, "%-16s sha256 %s…  %s\n", label, short(a["sha256"], 8), oneLine(a["content"], 80))
					}
				}
				artifact("snapshot before", m["snapshot_before"])
				dur := ""
				if ns, ok := m["duration_ns"].(float64); ok {
					dur = fmt.Sprintf(" in %s", time.Duration(ns).Round(time.Millisecond))
				}
				fmt.Fprintf(w, "%-16s exit %v%s\n", "apply", m["exit_code"], dur)
				if out, ok := m["output"].(map[string]any); ok && out["content"] != "" {
					fmt.Fprintf(w, "%v\n", out["content"])
				}
				artifact("snapshot after", m["snapshot_after"])
				if r, ok := m["reason"].(string); ok && r != "" {
					fmt.Fprintf(w, "reason: %s\n", r)
				}
				fmt.Fprintf(w, "plan %v is %v\n", m["plan_id"], m["status"])
				if m["status"] == "applied" {
					fmt.Fprintf(w, "next: airlock ops verify %v\n", m["plan_id"])
				}
			})
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the single-use approval token")
	return cmd
}

func opsVerifyCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "verify PLAN",
		Short: "Run the plan's read-only assertions and record the evidence",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return opsCall(cmd.Context(), e, "POST", planPath(args[0])+"/verify", map[string]any{}, func(w io.Writer, m map[string]any) {
				as, _ := m["assertions"].([]any)
				tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
				for _, a := range as {
					am, _ := a.(map[string]any)
					mark := "✗"
					if am["passed"] == true {
						mark = "✓"
					}
					line := fmt.Sprintf("%s %v\t%v\t→ %s", mark, am["name"], am["command"], oneLine(am["output"], 60))
					if r, ok := am["reason"].(string); ok && r != "" && am["passed"] != true {
						line += "  (" + r + ")"
					}
					fmt.Fprintln(tw, line)
				}
				tw.Flush()
				fmt.Fprintf(w, "plan %v is %v\n", m["plan_id"], m["status"])
			})
		},
	}
}

func opsShowCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "show PLAN",
		Short: "Show a plan: status, hash, steps, diff, token state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return opsCall(cmd.Context(), e, "GET", planPath(args[0]), nil, func(w io.Writer, m map[string]any) {
				plan, _ := m["plan"].(map[string]any)
				fmt.Fprintf(w, "plan     %v (%v)\nhash     %v\nintent   %v\nintact   %v\n", m["id"], m["status"], m["hash"], plan["intent"], m["intact"])
				if t, ok := m["token"].(map[string]any); ok {
					fmt.Fprintf(w, "token    approved by %v, expires %v, used %v, live %v\n", t["approved_by"], t["expires_at"], t["used"], t["live"])
				}
				if d, ok := m["diff"].(map[string]any); ok {
					fmt.Fprintf(w, "diff     sha256 %v\n%v\n", d["sha256"], d["content"])
				}
			})
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
			q := url.Values{}
			if project != "" {
				q.Set("project", project)
			}
			if status != "" {
				q.Set("status", status)
			}
			return getJSON(cmd.Context(), e, "GET", "/v1/ops/plans?"+q.Encode(), nil, func(w io.Writer, list []map[string]any) {
				printTable(w, list, "No plans yet: open one with `airlock ops plan --file plan.json`.", []string{"ID", "STATUS", "TARGET", "INTENT"}, func(p map[string]any) []any {
					return []any{p["id"], p["status"], p["provider"], p["intent"]}
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
			return opsCall(cmd.Context(), e, "POST", planPath(args[0])+"/reject", map[string]string{"reason": reason}, func(w io.Writer, m map[string]any) {
				fmt.Fprintf(w, "plan %v: %v\n", m["id"], m["status"])
			})
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
			q := url.Values{}
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
			for k, v := range map[string]string{"project": project, "plan": plan, "status": status} {
				if v != "" {
					q.Set(k, v)
				}
			}
			if verify {
				q.Set("verify", "1")
			}
			var broken bool
			err := opsCall(cmd.Context(), e, "GET", "/v1/ops/journal?"+q.Encode(), nil, func(w io.Writer, m map[string]any) {
				entries, _ := m["entries"].([]any)
				printTable(w, entries, "", []string{"seq", "event", "status", "actor", "detail"}, func(en any) []any {
					x, _ := en.(map[string]any)
					var detail strings.Builder
					enc := json.NewEncoder(&detail)
					enc.SetEscapeHTML(false)
					_ = enc.Encode(x["detail"])
					return []any{x["seq"], x["event"], x["status"], x["actor"], oneLine(detail.String(), 70)}
				})
				summary := fmt.Sprintf("journal of %v: %d entries", m["project"], len(entries))
				if v, ok := m["verification"].(map[string]any); ok {
					// The verified count is the whole journal's, not the page listed; the
					// anchor outside the database says how many there should be.
					found, _ := v["entries"].(float64)
					expected, _ := v["expected"].(float64)
					summary = fmt.Sprintf("journal of %v: %d entries", m["project"], int(found))
					if expected > found {
						summary += fmt.Sprintf(" (%d expected: the journal was truncated)", int(expected))
					}
					ps, _ := v["problems"].([]any)
					for _, p := range ps {
						pm, _ := p.(map[string]any)
						fmt.Fprintf(w, "%v: seq %v: %v\n", pm["kind"], pm["seq"], pm["detail"])
					}
					if v["ok"] == true {
						summary += ", chain and signatures OK"
					} else {
						broken = true
						summary += fmt.Sprintf(", %d problem(s)", len(ps))
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

// short returns the first n characters of a string value.
func short(v any, n int) string {
	s, _ := v.(string)
	if len(s) > n {
		return s[:n]
	}
	return s
}

// oneLine folds a value onto one line of at most n characters.
func oneLine(v any, n int) string {
	s := strings.Join(strings.Fields(fmt.Sprint(v)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
