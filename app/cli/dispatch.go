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
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// sortedJSON is v as JSON with its keys in alphabetical order, as the lines that show a
// policy or defaults always printed it.
func sortedJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return string(raw)
	}
	sorted, err := json.Marshal(fields) // a map's keys are written sorted
	if err != nil {
		return string(raw)
	}
	return string(sorted)
}

// timeText is a time as the API writes it (RFC 3339), "" for none.
func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

type defaultsFlags struct {
	profile, posture, sandbox, approval, exec string
	network                                   networkFlag
	limits                                    limitsFlags
}

func (d *defaultsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.posture, "posture", "", "posture: \"\" (standard) or cloudops (bash asks every time, network on)")
	cmd.Flags().StringVar(&d.sandbox, "sandbox", "", "sandbox mode: read-only | workspace-write | full-access")
	registerNetwork(cmd.Flags(), &d.network)
	cmd.Flags().StringVar(&d.approval, "approval", "", "approval policy: untrusted | on-request | on-failure | never")
	// Codex's spellings of the same flag, with the same values.
	cmd.Flags().StringVar(&d.approval, "approval-policy", "", "same as --approval")
	cmd.Flags().StringVar(&d.approval, "ask-for-approval", "", "same as --approval (Codex's name): untrusted | on-failure | on-request | never")
	cmd.Flags().StringVar(&d.profile, "profile", "", "permission profile, beneath the other settings given here (airlock profile list)")
	cmd.Flags().StringVar(&d.exec, "execution-mode", "", "where commands run: local | sandbox (the micro-VM) | auto")
	// --exec-mode: the name these commands had first; the same flag as `airlock exec`'s now.
	cmd.Flags().StringVar(&d.exec, "exec-mode", "", "same as --execution-mode")
	cmd.Flags().MarkHidden("exec-mode")
	d.limits.register(cmd.Flags())
}

func (d *defaultsFlags) value(cmd *cobra.Command) api.Defaults {
	v := api.Defaults{Profile: d.profile, Posture: d.posture, SandboxMode: d.sandbox, ApprovalPolicy: d.approval, ExecutionMode: d.exec, Limits: d.limits.value(cmd.Flags())}
	v.Network = ifChanged(cmd, "network", d.network.v)
	return v
}

// ifChanged is &v when the flag name was given, else nil: a patch changes only what
// was given.
func ifChanged[T any](cmd *cobra.Command, name string, v T) *T {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &v
}

func absDir(dir string) (string, error) {
	if strings.HasPrefix(dir, "~/") || dir == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	return filepath.Abs(dir)
}

func printDepartment(w io.Writer, d api.Department) {
	fmt.Fprintf(w, "department %v: %v (%v)\n", d.Name, d.Directory, d.Status)
}

func newDeptCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "dept", Short: "Departments: named directories with their own defaults"}
	var df defaultsFlags
	add := &cobra.Command{
		Use:   "add NAME DIR",
		Short: "Add a department (runs may start inside its directory)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := absDir(args[1])
			if err != nil {
				return err
			}
			in := api.DepartmentIn{Name: args[0], Dir: dir, Defaults: df.value(cmd)}
			// Defaults that widen access, or a directory that is not a known place yet,
			// need the person: the core says which.
			return withProof(cmd.Context(), e, &in.Proof, "a department", args[0], func() error {
				return printRoute(cmd.Context(), e, api.AddDepartment, in, printDepartment)
			})
		},
	}
	df.register(add)
	list := &cobra.Command{
		Use: "list", Short: "List departments", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := call(cmd.Context(), e, api.ListDepartments, api.None{})
			if err != nil {
				return err
			}
			ds := make([]api.Department, 0, len(rows))
			for _, r := range rows {
				ds = append(ds, r.Department)
			}
			return e.print(ds, func(w io.Writer) {
				printTable(w, ds, "No departments yet: add one with `airlock dept add NAME DIR`.", []string{"NAME", "DIRECTORY", "STATUS", "DEFAULTS"}, func(d api.Department) []any {
					return []any{d.Name, d.Directory, d.Status, sortedJSON(d.Defaults)}
				})
			})
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a department", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.GetDepartment, api.None{}, func(w io.Writer, d api.Department) {
				fmt.Fprintf(w, "department %v\ndirectory  %v\nstatus     %v %v\ndefaults   %s\n", d.Name, d.Directory, d.Status, d.StatusReason, sortedJSON(d.Defaults))
			}, args[0])
		},
	}
	var sf defaultsFlags
	set := &cobra.Command{
		Use:   "set NAME [flags]",
		Short: "Replace a department's defaults (runs started from then on use them)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := api.DefaultsIn{Defaults: sf.value(cmd)}
			return withProof(cmd.Context(), e, &in.Proof, "department defaults", args[0], func() error {
				return printRoute(cmd.Context(), e, api.SetDepartmentDefaults, in, printDepartment, args[0])
			})
		},
	}
	sf.register(set)
	rm := &cobra.Command{
		Use: "rm NAME", Short: "Remove a department (its runs are held again at their next start)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.RemoveDepartment, api.None{}, func(w io.Writer, _ api.Removed) {
				fmt.Fprintf(w, "removed department %v\n", args[0])
			}, args[0])
		},
	}
	cmd.AddCommand(add, list, show, set, rm)
	return cmd
}

// taskFlags are the flags of `task add` and `task edit`.
type taskFlags struct {
	name, cwd, schedule, tz, dept, overlap, missed string
	env, secrets                                   []string
	timeout, noProgress, hold                      time.Duration
	disabled                                       bool
	df                                             defaultsFlags
	agent                                          agentFlags
}

// agentFlags make a task an agent task (`--agent claude --prompt-file F`).
type agentFlags struct {
	kind, promptFile, model, apiBase, keySecret, bin string
}

func (a *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.kind, "agent", "", "run a coding agent on a prompt instead of a command: claude | codex | opencode")
	cmd.Flags().StringVar(&a.promptFile, "prompt-file", "", "the agent's prompt: the file's text is stored with the task (editing the file later changes nothing)")
	cmd.Flags().StringVar(&a.model, "model", "", "the agent's model (default: the agent's own)")
	cmd.Flags().StringVar(&a.apiBase, "api-base", "", "the model API's base URL (default: https://api.anthropic.com for claude, https://api.openai.com/v1 for codex and opencode)")
	cmd.Flags().StringVar(&a.keySecret, "api-key-secret", "", "the keyring secret holding the API key (default ANTHROPIC_API_KEY for claude, OPENAI_API_KEY otherwise; set it with `airlock secret set NAME`)")
	cmd.Flags().StringVar(&a.bin, "agent-bin", "", "the agent's executable (default: looked up in PATH at each run)")
}

// changed says whether any agent flag was given.
func (a *agentFlags) changed(cmd *cobra.Command) bool {
	for _, n := range []string{"agent", "prompt-file", "model", "api-base", "api-key-secret", "agent-bin"} {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// maxPromptBytes bounds a prompt file: a prompt, not a data set.
const maxPromptBytes = 1 << 20

// spec is the agent the flags describe, over cur (the task's agent when editing; nil
// when adding).
func (a *agentFlags) spec(cmd *cobra.Command, cur *api.AgentSpec) (*api.AgentSpec, error) {
	s := api.AgentSpec{}
	if cur != nil {
		s = *cur
	}
	set := func(name string, dst *string, v string) {
		if cmd.Flags().Changed(name) {
			*dst = v
		}
	}
	set("agent", &s.Kind, a.kind)
	set("model", &s.Model, a.model)
	set("api-base", &s.APIBase, a.apiBase)
	set("api-key-secret", &s.APIKeySecret, a.keySecret)
	set("agent-bin", &s.Binary, a.bin)
	if s.Kind == "" {
		return nil, errors.New("--prompt-file, --model, --api-base, --api-key-secret and --agent-bin are for an agent task: give --agent claude|codex|opencode too")
	}
	if a.promptFile != "" {
		st, err := os.Stat(a.promptFile)
		if err != nil {
			return nil, fmt.Errorf("--prompt-file: %w", err)
		}
		if st.Size() > maxPromptBytes {
			return nil, fmt.Errorf("--prompt-file %s is %d bytes: a prompt is at most %d; shorten it, or have the prompt tell the agent to read the file", a.promptFile, st.Size(), maxPromptBytes)
		}
		b, err := os.ReadFile(a.promptFile)
		if err != nil {
			return nil, fmt.Errorf("--prompt-file: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("--prompt-file %s is empty: write the agent's prompt in it", a.promptFile)
		}
		s.Prompt = string(b)
	} else if cur == nil {
		return nil, errors.New("an agent task needs its prompt: give --prompt-file FILE")
	}
	if s.Binary != "" {
		abs, err := filepath.Abs(s.Binary)
		if err != nil {
			return nil, fmt.Errorf("--agent-bin: %w", err)
		}
		s.Binary = abs
	}
	return &s, nil
}

func (f *taskFlags) register(cmd *cobra.Command, add bool) {
	if add {
		cmd.Flags().StringVar(&f.name, "name", "", "the task's name")
		cmd.Flags().BoolVar(&f.disabled, "disabled", false, "create it disabled")
	}
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "working directory: the run's writable root")
	cmd.Flags().StringVar(&f.schedule, "schedule", "", "cron line (5 fields, or @daily, @every 1h, …); empty: only run-now")
	cmd.Flags().StringVar(&f.tz, "tz", "", "IANA time zone of the schedule (default: local)")
	cmd.Flags().StringVar(&f.dept, "dept", "", "department")
	cmd.Flags().StringArrayVar(&f.env, "env", nil, "environment variable K=V (repeatable)")
	cmd.Flags().StringArrayVar(&f.secrets, "secret", nil, "secret NAME from the secret store (keyring or file), injected at start as $NAME (repeatable)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "hard timeout of a run")
	cmd.Flags().DurationVar(&f.noProgress, "no-progress", 0, "end a run that prints nothing for this long")
	cmd.Flags().DurationVar(&f.hold, "hold-deadline", 0, "how long a held run waits for you before it expires (default 24h)")
	cmd.Flags().StringVar(&f.overlap, "overlap", "", "when a run is still going at the next occurrence: skip | queue | allow")
	cmd.Flags().StringVar(&f.missed, "missed", "", "occurrences missed while Airlock was closed: skip | run_once")
	f.df.register(cmd)
	f.agent.register(cmd)
}

func (f *taskFlags) envMap() (map[string]string, error) {
	if len(f.env) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: write it as NAME=value", kv)
		}
		m[k] = v
	}
	return m, nil
}

func printTask(w io.Writer, t api.TaskRow) {
	argv, _ := json.Marshal(t.Argv)
	fmt.Fprintf(w, "task       %v (enabled %v)\n", t.Name, t.Enabled)
	if a := t.Agent; a != nil {
		model := a.Model
		if model == "" {
			model = "the agent's default"
		}
		fmt.Fprintf(w, "agent      %s, model %s, API %s, key from secret %s\nprompt     %s\n", a.Kind, model, a.APIBase, a.APIKeySecret, promptLine(a.Prompt))
	} else {
		fmt.Fprintf(w, "command    %s\n", argv)
	}
	fmt.Fprintf(w, "cwd        %v\nschedule   %v\n", t.Cwd, t.Description)
	if t.Department != "" {
		fmt.Fprintf(w, "department %s\n", t.Department)
	}
	if len(t.NextRuns) > 0 {
		fmt.Fprintf(w, "next runs ")
		for _, n := range t.NextRuns {
			fmt.Fprintf(w, " %v", n)
		}
		fmt.Fprintln(w)
	}
	if t.Paused {
		fmt.Fprintf(w, "PAUSED     %v\n", t.PauseReason)
	}
	for _, wn := range t.Warnings {
		fmt.Fprintf(w, "WARNING    %s\n", wn)
	}
}

// promptLine is a prompt's first line, shortened, for a listing.
func promptLine(p string) string {
	line, _, more := strings.Cut(strings.TrimSpace(p), "\n")
	if len(line) > 70 {
		line, more = line[:67], true
	}
	if more {
		line += "..."
	}
	return line
}

// taskWhat is what a task runs, in a table cell: its command, or its agent.
func taskWhat(t api.TaskRow) string {
	if t.Agent != nil {
		if t.Agent.Model != "" {
			return t.Agent.Kind + " (" + t.Agent.Model + ")"
		}
		return t.Agent.Kind
	}
	return strings.Join(t.Argv, " ")
}

func newTaskCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "task", Short: "Scheduled tasks: a command, a directory and a cron schedule"}
	var af taskFlags
	add := &cobra.Command{
		Use:   "add --name N --cwd DIR --schedule CRON [flags] (-- CMD... | --agent KIND --prompt-file F)",
		Short: "Create a task; creating it is your approval of its exact command (or its agent and prompt)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if af.name == "" || af.cwd == "" {
				return errors.New("a task needs --name and --cwd (and usually --schedule)")
			}
			var agent *api.AgentSpec
			if af.agent.changed(cmd) {
				if len(args) > 0 {
					return errors.New("an agent task runs its agent, not a command: give --agent and --prompt-file, or a command after --, not both")
				}
				a, err := af.agent.spec(cmd, nil)
				if err != nil {
					return err
				}
				agent = a
			} else if len(args) == 0 {
				return errors.New("a task needs its command after -- (e.g. -- /usr/bin/backup --full), or an agent (--agent claude --prompt-file FILE)")
			}
			cwd, err := absDir(af.cwd)
			if err != nil {
				return err
			}
			envm, err := af.envMap()
			if err != nil {
				return err
			}
			tz := af.tz
			if tz == "" {
				tz = localZone()
			}
			in := api.TaskIn{TaskSpec: api.TaskSpec{Name: af.name, Argv: args, Agent: agent, Cwd: cwd, Schedule: af.schedule, TimeZone: tz,
				Department: af.dept, Overrides: af.df.value(cmd), Env: envm, Secrets: af.secrets,
				Timeout: af.timeout, NoProgressTimeout: af.noProgress, Overlap: af.overlap, Missed: af.missed,
				HoldDeadline: af.hold, Disabled: af.disabled}}
			return withProof(cmd.Context(), e, &in.Proof, "a task", af.name, func() error {
				return printRoute(cmd.Context(), e, api.CreateTask, in, printTask)
			})
		},
	}
	af.register(add, true)
	add.Flags().SetInterspersed(false)

	var ef taskFlags
	edit := &cobra.Command{
		Use:   "edit NAME [flags] [-- CMD...]",
		Short: "Change a task (a new command is a new approval)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in api.TaskPatchIn
			p := &in.TaskPatch
			if len(args) > 1 {
				p.Argv = args[1:]
			}
			changed := cmd.Flags().Changed
			if changed("cwd") {
				cwd, err := absDir(ef.cwd)
				if err != nil {
					return err
				}
				p.Cwd = &cwd
			}
			p.Schedule = ifChanged(cmd, "schedule", ef.schedule)
			p.TimeZone = ifChanged(cmd, "tz", ef.tz)
			p.Department = ifChanged(cmd, "dept", ef.dept)
			p.Timeout = ifChanged(cmd, "timeout", ef.timeout)
			p.NoProgressTimeout = ifChanged(cmd, "no-progress", ef.noProgress)
			p.Overlap = ifChanged(cmd, "overlap", ef.overlap)
			p.Missed = ifChanged(cmd, "missed", ef.missed)
			p.HoldDeadline = ifChanged(cmd, "hold-deadline", ef.hold)
			if changed("secret") {
				p.Secrets = ef.secrets
			}
			if ov := ef.df.value(cmd); ov != (api.Defaults{}) {
				p.Overrides = &ov
			}
			if ef.agent.changed(cmd) {
				if p.Argv != nil {
					return errors.New("give the task a command (after --) or agent flags, not both")
				}
				cur, err := call(cmd.Context(), e, api.GetTask, api.None{}, args[0])
				if err != nil {
					return err
				}
				if p.Agent, err = ef.agent.spec(cmd, cur.Agent); err != nil {
					return err
				}
			}
			if changed("env") {
				m, err := ef.envMap()
				if err != nil {
					return err
				}
				p.Env = m
			}
			// What widens (and a new command under a task that already widens) needs the
			// person: the core says so.
			return withProof(cmd.Context(), e, &in.Proof, "a task", args[0], func() error {
				return printRoute(cmd.Context(), e, api.EditTask, in, printTask, args[0])
			})
		},
	}
	ef.register(edit, false)
	list := &cobra.Command{
		Use: "list", Short: "List tasks with their schedule in words and next run", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.ListTasks, api.None{}, func(w io.Writer, ts []api.TaskRow) {
				printTable(w, ts, "No tasks yet: create one with `airlock task add --name N --cwd DIR --schedule CRON -- CMD`.", []string{"NAME", "ENABLED", "SCHEDULE", "NEXT", "CWD", "RUNS"}, func(t api.TaskRow) []any {
					next := "—"
					if len(t.NextRuns) > 0 {
						next = t.NextRuns[0]
					}
					return []any{t.Name, t.Enabled, t.Description, next, t.Cwd, taskWhat(t)}
				})
			})
		},
	}
	done := func(use, name string) func(io.Writer, api.TaskRow) {
		return func(w io.Writer, _ api.TaskRow) { fmt.Fprintf(w, "%s %s: done\n", use, name) }
	}
	one := func(use, short string, run func(cmd *cobra.Command, name string) error) *cobra.Command {
		return &cobra.Command{
			Use: use + " NAME", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return run(cmd, args[0]) },
		}
	}
	cmd.AddCommand(add, edit, list,
		one("show", "Show a task", func(cmd *cobra.Command, name string) error {
			return printRoute(cmd.Context(), e, api.GetTask, api.None{}, printTask, name)
		}),
		one("rm", "Remove a task (cancels its open runs)", func(cmd *cobra.Command, name string) error {
			return printRoute(cmd.Context(), e, api.RemoveTask, api.None{}, func(w io.Writer, _ api.Removed) {
				fmt.Fprintf(w, "rm %s: done\n", name)
			}, name)
		}),
		one("enable", "Enable a task (also clears a pause after repeated failures)", func(cmd *cobra.Command, name string) error {
			return printRoute(cmd.Context(), e, api.EnableTask, api.None{}, done("enable", name), name)
		}),
		one("disable", "Disable a task", func(cmd *cobra.Command, name string) error {
			return printRoute(cmd.Context(), e, api.DisableTask, api.None{}, done("disable", name), name)
		}),
		one("run-now", "Start a run now, with exactly the scheduled context", func(cmd *cobra.Command, name string) error {
			return printRoute(cmd.Context(), e, api.RunTaskNow, api.None{}, func(w io.Writer, r api.Run) {
				fmt.Fprintf(w, "run %v of %v: %v %v\n", r.ID, r.TaskName, r.Status, r.Reason)
			}, name)
		}))
	return cmd
}

func localZone() string {
	if tz := os.Getenv("TZ"); tz != "" {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			return target[i+len("zoneinfo/"):]
		}
	}
	return "UTC"
}

func printRuns(w io.Writer, rs []api.Run) {
	printTable(w, rs, "No runs.", []string{"ID", "TASK", "STATUS", "SCHEDULED", "REASON"}, func(r api.Run) []any {
		reason := r.Reason
		if reason == "" {
			reason = r.CatchUp
		}
		return []any{r.ID, r.TaskName, r.Status, scheduledText(r), reason}
	})
}

// scheduledText is a run's occurrence, or for a span of missed ones, its first and last
// and how many ("2026-03-02T08:20:00Z … 2026-03-02T09:10:00Z (6)").
func scheduledText(r api.Run) string {
	if r.MissedCount > 1 && r.MissedUntil != nil {
		return fmt.Sprintf("%s … %s (%d)", timeText(&r.ScheduledAt), timeText(r.MissedUntil), r.MissedCount)
	}
	return timeText(&r.ScheduledAt)
}

func newRunsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "Runs of tasks: list, show, logs, cancel"}
	var q api.RunQuery
	list := &cobra.Command{
		Use: "list", Short: "List runs, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			page, err := call(cmd.Context(), e, api.ListRuns, q)
			if err != nil {
				return err
			}
			return e.print(page.Runs, func(w io.Writer) { printRuns(w, page.Runs) })
		},
	}
	list.Flags().BoolVar(&q.Waiting, "waiting", false, "only runs waiting for you")
	list.Flags().StringVar(&q.Task, "task", "", "only this task's runs")
	list.Flags().StringVar(&q.Status, "status", "", "only these states (comma-separated)")
	list.Flags().IntVar(&q.Limit, "limit", 0, "at most this many (default 100)")
	show := &cobra.Command{
		Use: "show ID", Short: "Show a run", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := call(cmd.Context(), e, api.GetRun, api.None{}, args[0])
			if err != nil {
				return err
			}
			var traffic *api.RunNetwork
			if r.Policy.Network.Norm() == api.NetworkAllowlist {
				n, err := call(cmd.Context(), e, api.GetRunNetwork, api.None{}, args[0])
				if err != nil {
					return err
				}
				traffic = &n
			}
			return e.print(r, func(w io.Writer) {
				exit := ""
				if r.ExitCode != nil {
					exit = fmt.Sprint(*r.ExitCode)
				}
				fmt.Fprintf(w, "run %v of %v: %v\nreason     %v\ncwd        %v\nscheduled  %v\nstarted    %v\nfinished   %v\nexit       %v\npolicy     %s\nlog        %v\n",
					r.ID, r.TaskName, r.Status, r.Reason, r.Cwd, scheduledText(r), timeText(r.StartedAt), timeText(r.FinishedAt), exit, sortedJSON(r.Policy), r.LogPath)
				if r.CatchUp != "" {
					fmt.Fprintf(w, "catch-up   %v\n", r.CatchUp)
				}
				if h := r.HostAllowed; h != nil {
					fmt.Fprintf(w, "host       allowed on the host by %v at %v (auto: the micro-VM was not ready)\n", h.By, timeText(&h.At))
				}
				if traffic != nil {
					printRunNetwork(w, *traffic)
				}
			})
		},
	}
	var follow bool
	logs := &cobra.Command{
		Use: "logs ID [-f]", Short: "Print a run's log; -f follows it live", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(cmd.Context(), e, args[0], follow) },
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing as the run writes")
	act := func(use, short string, rt api.Route[api.None, api.RunCancelled]) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return printRoute(cmd.Context(), e, rt, api.None{}, func(w io.Writer, _ api.RunCancelled) {
					fmt.Fprintf(w, "run %s: %s\n", args[0], use)
				}, args[0])
			},
		}
	}
	resume := &cobra.Command{
		Use: "resume ID", Short: "Resume a run paused after repeated denials", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printRoute(cmd.Context(), e, api.ResumeRun, api.None{}, func(w io.Writer, _ api.RunResumed) {
				fmt.Fprintf(w, "run %s: resume\n", args[0])
			}, args[0])
		},
	}
	cmd.AddCommand(list, show, logs, act("cancel", "Cancel a run (kills everything it started)", api.CancelRun), resume)
	return cmd
}

// runLogs prints the log from the start and, with follow, keeps reading until the run
// ends.
func runLogs(ctx context.Context, e *env, id string, follow bool) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	var offset int64
	read := func() (api.LogPiece, error) {
		piece, err := localapi.Call(ctx, c, api.RunLog, api.LogQuery{Offset: offset}, id)
		if err != nil {
			return piece, err
		}
		if piece.Pruned {
			return piece, errors.New(piece.Missing)
		}
		io.WriteString(e.stdout, piece.Data)
		offset = piece.End
		return piece, nil
	}
	for {
		piece, err := read()
		if err != nil {
			return err
		}
		if piece.End < piece.Size {
			continue
		}
		if !follow {
			return nil
		}
		run, err := localapi.Call(ctx, c, api.GetRun, api.None{}, id)
		if err != nil {
			return err
		}
		switch run.Status {
		case "succeeded", "failed", "timed_out", "cancelled", "denied", "interrupted", "expired", "skipped":
			// One last read for what was written just before the end.
			_, _ = read()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func newAuthorizeCmd(e *env) *cobra.Command {
	var confirmHome bool
	cmd := &cobra.Command{
		Use:   "authorize DIR [--confirm-home]",
		Short: "Authorize a directory: runs may start and write there; every run waiting on it or below is released at once",
		Long: "Authorizing is a person's act: it asks you, at a terminal, to type the directory's name.\n" +
			"Authorizing / or your home directory (or an ancestor of it) also needs --confirm-home.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := absDir(args[0])
			if err != nil {
				return err
			}
			typed, err := confirmDirOnTTY(dir, confirmHome)
			if err != nil {
				return err
			}
			pw, err := passwordOnTTY(cmd.Context(), e, "authorizing a directory", "use Authorize this directory in the window")
			if err != nil {
				return err
			}
			in := api.AuthorizeIn{Dir: dir, ConfirmHome: confirmHome, Proof: api.Proof{Confirmation: typed, Password: pw}}
			return printRoute(cmd.Context(), e, api.Authorize, in, func(w io.Writer, a api.Authorization) {
				fmt.Fprintf(w, "authorized %v: %d waiting run(s) released\n", a.Path, len(a.Released))
			})
		},
	}
	cmd.Flags().BoolVar(&confirmHome, "confirm-home", false, "confirm authorizing / or your home directory, which makes everything below it writable")
	return cmd
}

func confirmDirOnTTY(dir string, confirmHome bool) (string, error) {
	tty, err := openTerminal("authorizing a directory", "use Authorize this directory in the window")
	if err != nil {
		return "", err
	}
	defer tty.Close()
	fmt.Fprintf(tty, "\nRuns will be able to start in %s and write there and below it.\n", dir)
	if confirmHome {
		fmt.Fprintf(tty, "That includes everything under %s (for your home: .ssh, .config, every project).\n", dir)
	}
	name := filepath.Base(dir)
	fmt.Fprintf(tty, "Type %q to authorize it: ", name)
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != name {
		return "", errors.New("not confirmed: nothing was authorized")
	}
	return name, nil
}

func newPlacesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "places", Short: "Known places: workspace roots, department directories, authorized directories"}
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List known places and who made them known", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.ListPlaces, api.None{}, func(w io.Writer, ps []api.KnownPlace) {
				printTable(w, ps, "", []string{"PATH", "KNOWN AS", "WHO", "WHEN"}, func(p api.KnownPlace) []any {
					by := p.By
					if p.Department != "" {
						by += " " + p.Department
					}
					return []any{p.Path, by, p.Who, timeText(p.When)}
				})
			})
		},
	}, &cobra.Command{
		Use: "revoke DIR", Short: "Revoke an authorized directory: future runs there are held again", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := absDir(args[0])
			if err != nil {
				return err
			}
			return printRoute(cmd.Context(), e, api.RevokePlace, api.PlaceIn{Dir: dir}, func(w io.Writer, _ api.AuthorizedPlace) {
				fmt.Fprintf(w, "revoked %s\n", dir)
			})
		},
	})
	return cmd
}

func newInboxCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use: "inbox", Short: "What is waiting for you: held runs and pending approvals, most urgent first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.Inbox, api.None{}, func(w io.Writer, items []api.InboxItem) {
				if len(items) == 0 {
					fmt.Fprintln(w, "Nothing is waiting for you.")
					return
				}
				for _, it := range items {
					tier := ""
					if it.Tier != "" {
						tier = it.Tier + "  "
					}
					fmt.Fprintf(w, "%s%v\n    → %v\n", tier, it.Asked, it.Answer)
				}
			})
		},
	}
}

func printDispatchState(w io.Writer, st api.DispatchState) {
	if st.Paused {
		since := ""
		if st.PausedAt != nil {
			since = " since " + st.PausedAt.Local().Format("2006-01-02 15:04")
		}
		by := ""
		if st.PausedBy != "" {
			by = " by " + st.PausedBy
		}
		fmt.Fprintf(w, "Dispatch is paused%s%s: scheduled runs are skipped (run-now still works).\n", by, since)
		fmt.Fprintln(w, "Resume with `airlock dispatch resume`.")
	} else {
		fmt.Fprintln(w, "Dispatch is on: scheduled runs start on their own.")
	}
	fmt.Fprintf(w, "%d scheduled task(s), %d running now.\n", st.Tasks, st.Running)
}

func newDispatchCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "dispatch", Short: "Whether scheduled runs start on their own: status, pause, resume", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printRoute(cmd.Context(), e, api.GetDispatch, api.None{}, printDispatchState)
		},
	}
	for _, c := range []struct {
		use, short string
		rt         api.Route[api.None, api.DispatchState]
	}{
		{"pause", "Pause dispatch: scheduled occurrences are recorded skipped until you resume (running runs go on)", api.PauseDispatch},
		{"resume", "Resume dispatch: scheduled runs start on their own again (occurrences skipped meanwhile do not run)", api.ResumeDispatch},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: c.use, Short: c.short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return printRoute(cmd.Context(), e, c.rt, api.None{}, printDispatchState)
			},
		})
	}
	return cmd
}
