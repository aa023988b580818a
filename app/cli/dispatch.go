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
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/spf13/cobra"
)

type defaultsFlags struct {
	posture, sandbox, approval, exec string
	network                          bool
}

func (d *defaultsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.posture, "posture", "", "posture: \"\" (standard) or cloudops (bash asks every time, network on)")
	cmd.Flags().StringVar(&d.sandbox, "sandbox", "", "sandbox mode: read-only | workspace-write | full-access")
	cmd.Flags().BoolVar(&d.network, "network", false, "allow network access")
	cmd.Flags().StringVar(&d.approval, "approval", "", "approval policy: untrusted | on-request | on-failure | never")
	cmd.Flags().StringVar(&d.exec, "execution-mode", "", "where commands run: local | sandbox (the micro-VM) | auto")
	// --exec-mode: the name these commands had first; the same flag as `airlock exec`'s now.
	cmd.Flags().StringVar(&d.exec, "exec-mode", "", "same as --execution-mode")
	cmd.Flags().MarkHidden("exec-mode")
}

func (d *defaultsFlags) value(cmd *cobra.Command) map[string]any {
	m := map[string]any{}
	if d.posture != "" {
		m["posture"] = d.posture
	}
	if d.sandbox != "" {
		m["sandbox_mode"] = d.sandbox
	}
	if cmd.Flags().Changed("network") {
		m["network"] = d.network
	}
	if d.approval != "" {
		m["approval_policy"] = d.approval
	}
	if d.exec != "" {
		m["execution_mode"] = d.exec
	}
	return m
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
			body := map[string]any{"name": args[0], "dir": dir, "defaults": df.value(cmd)}
			if err := proofForWidening(cmd.Context(), e, body, df.value(cmd), "a department with full access or approval never", args[0]); err != nil {
				return err
			}
			printDept := func(w io.Writer, d map[string]any) {
				fmt.Fprintf(w, "department %v: %v (%v)\n", d["name"], d["directory"], d["status"])
			}
			err = getJSON(cmd.Context(), e, "POST", "/v1/departments", body, printDept)
			var ae *api.Error
			if errors.As(err, &ae) && ae.Code == "not_interactive" && body["password"] == nil && body["confirmation"] == nil {
				// A directory that is not a known place yet becomes one: the core asks for
				// the person, as authorizing it would.
				if perr := addProof(cmd.Context(), e, body, "a department in a directory that is not a known place yet", args[0]); perr != nil {
					return fmt.Errorf("%w (%v)", err, perr)
				}
				return getJSON(cmd.Context(), e, "POST", "/v1/departments", body, printDept)
			}
			return err
		},
	}
	df.register(add)
	list := &cobra.Command{
		Use: "list", Short: "List departments", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return getJSON(cmd.Context(), e, "GET", "/v1/departments", nil, func(w io.Writer, ds []map[string]any) {
				printTable(w, ds, "No departments yet: add one with `airlock dept add NAME DIR`.", []string{"NAME", "DIRECTORY", "STATUS", "DEFAULTS"}, func(d map[string]any) []any {
					def, _ := json.Marshal(d["defaults"])
					return []any{d["name"], d["directory"], d["status"], string(def)}
				})
			})
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a department", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return getJSON(cmd.Context(), e, "GET", "/v1/departments/"+url.PathEscape(args[0]), nil, func(w io.Writer, d map[string]any) {
				def, _ := json.Marshal(d["defaults"])
				fmt.Fprintf(w, "department %v\ndirectory  %v\nstatus     %v %v\ndefaults   %s\n", d["name"], d["directory"], d["status"], d["status_reason"], def)
			})
		},
	}
	rm := &cobra.Command{
		Use: "rm NAME", Short: "Remove a department (its runs are held again at their next start)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return getJSON(cmd.Context(), e, "DELETE", "/v1/departments/"+url.PathEscape(args[0]), nil, func(w io.Writer, m map[string]any) {
				fmt.Fprintf(w, "removed department %v\n", args[0])
			})
		},
	}
	cmd.AddCommand(add, list, show, rm)
	return cmd
}

// taskFlags are the flags of `task add` and `task edit`.
type taskFlags struct {
	name, cwd, schedule, tz, dept, overlap, missed string
	env, secrets                                   []string
	timeout, noProgress, hold                      time.Duration
	disabled                                       bool
	df                                             defaultsFlags
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
	cmd.Flags().StringArrayVar(&f.secrets, "secret", nil, "secret NAME from the keyring, injected at start as $NAME (repeatable)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "hard timeout of a run")
	cmd.Flags().DurationVar(&f.noProgress, "no-progress", 0, "end a run that prints nothing for this long")
	cmd.Flags().DurationVar(&f.hold, "hold-deadline", 0, "how long a held run waits for you before it expires (default 24h)")
	cmd.Flags().StringVar(&f.overlap, "overlap", "", "when a run is still going at the next occurrence: skip | queue | allow")
	cmd.Flags().StringVar(&f.missed, "missed", "", "occurrences missed while Airlock was closed: skip | run_once")
	f.df.register(cmd)
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

func printTask(w io.Writer, t map[string]any) {
	argv, _ := json.Marshal(t["argv"])
	fmt.Fprintf(w, "task       %v (enabled %v)\ncommand    %s\ncwd        %v\nschedule   %v\n", t["name"], t["enabled"], argv, t["cwd"], t["description"])
	if d, _ := t["department"].(string); d != "" {
		fmt.Fprintf(w, "department %s\n", d)
	}
	if next, ok := t["next_runs"].([]any); ok && len(next) > 0 {
		fmt.Fprintf(w, "next runs ")
		for _, n := range next {
			fmt.Fprintf(w, " %v", n)
		}
		fmt.Fprintln(w)
	}
	if p, _ := t["paused"].(bool); p {
		fmt.Fprintf(w, "PAUSED     %v\n", t["pause_reason"])
	}
}

func newTaskCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "task", Short: "Scheduled tasks: a command, a directory and a cron schedule"}
	var af taskFlags
	add := &cobra.Command{
		Use:   "add --name N --cwd DIR --schedule CRON [flags] -- CMD...",
		Short: "Create a task; creating it is your approval of its exact command",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if af.name == "" || af.cwd == "" {
				return errors.New("a task needs --name and --cwd (and usually --schedule)")
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
			spec := map[string]any{"name": af.name, "argv": args, "cwd": cwd, "schedule": af.schedule, "time_zone": tz,
				"department": af.dept, "overrides": af.df.value(cmd), "env": envm, "secrets": af.secrets,
				"timeout": af.timeout, "no_progress_timeout": af.noProgress, "overlap": af.overlap, "missed": af.missed,
				"hold_deadline": af.hold, "disabled": af.disabled}
			if err := proofForWidening(cmd.Context(), e, spec, af.df.value(cmd), "a task with full access or approval never", af.name); err != nil {
				return err
			}
			return getJSON(cmd.Context(), e, "POST", "/v1/tasks", spec, printTask)
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
			p := map[string]any{}
			if len(args) > 1 {
				p["argv"] = args[1:]
			}
			set := func(flag, key string, v any) {
				if cmd.Flags().Changed(flag) {
					p[key] = v
				}
			}
			if cmd.Flags().Changed("cwd") {
				cwd, err := absDir(ef.cwd)
				if err != nil {
					return err
				}
				p["cwd"] = cwd
			}
			set("schedule", "schedule", ef.schedule)
			set("tz", "time_zone", ef.tz)
			set("dept", "department", ef.dept)
			set("timeout", "timeout", ef.timeout)
			set("no-progress", "no_progress_timeout", ef.noProgress)
			set("overlap", "overlap", ef.overlap)
			set("missed", "missed", ef.missed)
			set("hold-deadline", "hold_deadline", ef.hold)
			set("secret", "secrets", ef.secrets)
			if ov := ef.df.value(cmd); len(ov) > 0 {
				p["overrides"] = ov
			}
			if cmd.Flags().Changed("env") {
				m, err := ef.envMap()
				if err != nil {
					return err
				}
				p["env"] = m
			}
			widen := ef.df.value(cmd)
			if _, ok := p["overrides"]; !ok && (p["argv"] != nil || p["cwd"] != nil) {
				// A new command under a task that runs with full access is a new approval of it.
				if c, err := e.client(); err == nil {
					var cur struct {
						Overrides map[string]any `json:"overrides"`
					}
					if c.Do(cmd.Context(), "GET", "/v1/tasks/"+url.PathEscape(args[0]), nil, &cur) == nil {
						widen = cur.Overrides
					}
				}
			}
			if err := proofForWidening(cmd.Context(), e, p, widen, "a task with full access or approval never", args[0]); err != nil {
				return err
			}
			return getJSON(cmd.Context(), e, "PATCH", "/v1/tasks/"+url.PathEscape(args[0]), p, printTask)
		},
	}
	ef.register(edit, false)
	list := &cobra.Command{
		Use: "list", Short: "List tasks with their schedule in words and next run", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return getJSON(cmd.Context(), e, "GET", "/v1/tasks", nil, func(w io.Writer, ts []map[string]any) {
				printTable(w, ts, "No tasks yet: create one with `airlock task add --name N --cwd DIR --schedule CRON -- CMD`.", []string{"NAME", "ENABLED", "SCHEDULE", "NEXT", "CWD"}, func(t map[string]any) []any {
					next := "—"
					if n, ok := t["next_runs"].([]any); ok && len(n) > 0 {
						next = fmt.Sprint(n[0])
					}
					return []any{t["name"], t["enabled"], t["description"], next, t["cwd"]}
				})
			})
		},
	}
	one := func(use, short, method, suffix string) *cobra.Command {
		return &cobra.Command{
			Use: use + " NAME", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				path := "/v1/tasks/" + url.PathEscape(args[0]) + suffix
				var body any
				if method == "POST" {
					body = map[string]any{}
				}
				return getJSON(cmd.Context(), e, method, path, body, func(w io.Writer, m map[string]any) {
					switch use {
					case "show":
						printTask(w, m)
					case "run-now":
						fmt.Fprintf(w, "run %v of %v: %v %v\n", m["id"], m["task_name"], m["status"], m["reason"])
					default:
						fmt.Fprintf(w, "%s %s: done\n", use, args[0])
					}
				})
			},
		}
	}
	cmd.AddCommand(add, edit, list,
		one("show", "Show a task", "GET", ""),
		one("rm", "Remove a task (cancels its open runs)", "DELETE", ""),
		one("enable", "Enable a task (also clears a pause after repeated failures)", "POST", "/enable"),
		one("disable", "Disable a task", "POST", "/disable"),
		one("run-now", "Start a run now, with exactly the scheduled context", "POST", "/run-now"))
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

func printRuns(w io.Writer, rs []map[string]any) {
	printTable(w, rs, "No runs.", []string{"ID", "TASK", "STATUS", "SCHEDULED", "REASON"}, func(r map[string]any) []any {
		return []any{r["id"], r["task_name"], r["status"], r["scheduled_at"], nz(r["reason"])}
	})
}

func newRunsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "Runs of tasks: list, show, logs, cancel"}
	var waiting bool
	var task, status string
	var limit int
	list := &cobra.Command{
		Use: "list", Short: "List runs, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if waiting {
				q.Set("waiting", "1")
			}
			if task != "" {
				q.Set("task", task)
			}
			if status != "" {
				q.Set("status", status)
			}
			if limit > 0 {
				q.Set("limit", fmt.Sprint(limit))
			}
			return getJSON(cmd.Context(), e, "GET", "/v1/runs?"+q.Encode(), nil, printRuns)
		},
	}
	list.Flags().BoolVar(&waiting, "waiting", false, "only runs waiting for you")
	list.Flags().StringVar(&task, "task", "", "only this task's runs")
	list.Flags().StringVar(&status, "status", "", "only these states (comma-separated)")
	list.Flags().IntVar(&limit, "limit", 0, "at most this many (default 100)")
	show := &cobra.Command{
		Use: "show ID", Short: "Show a run", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return getJSON(cmd.Context(), e, "GET", "/v1/runs/"+url.PathEscape(args[0]), nil, func(w io.Writer, r map[string]any) {
				pol, _ := json.Marshal(r["policy"])
				fmt.Fprintf(w, "run %v of %v: %v\nreason     %v\ncwd        %v\nscheduled  %v\nstarted    %v\nfinished   %v\nexit       %v\npolicy     %s\nlog        %v\n",
					r["id"], r["task_name"], r["status"], nz(r["reason"]), r["cwd"], r["scheduled_at"], nz(r["started_at"]), nz(r["finished_at"]), nz(r["exit_code"]), pol, nz(r["log_path"]))
				if h, ok := r["host_allowed"].(map[string]any); ok {
					fmt.Fprintf(w, "host       allowed on the host by %v at %v (auto: the micro-VM was not ready)\n", h["by"], h["at"])
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
	act := func(use, short, suffix string) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return getJSON(cmd.Context(), e, "POST", "/v1/runs/"+url.PathEscape(args[0])+suffix, map[string]any{}, func(w io.Writer, m map[string]any) {
					fmt.Fprintf(w, "run %s: %s\n", args[0], use)
				})
			},
		}
	}
	cmd.AddCommand(list, show, logs, act("cancel", "Cancel a run (kills everything it started)", "/cancel"),
		act("resume", "Resume a run paused after repeated denials", "/resume"))
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
	for {
		var chunk struct {
			Offset int64  `json:"offset"`
			Data   string `json:"data"`
			Size   int64  `json:"size"`
		}
		if err := c.Do(ctx, "GET", fmt.Sprintf("/v1/runs/%s/log?offset=%d", url.PathEscape(id), offset), nil, &chunk); err != nil {
			return err
		}
		io.WriteString(e.stdout, chunk.Data)
		offset = chunk.Offset
		if chunk.Offset < chunk.Size {
			continue
		}
		if !follow {
			return nil
		}
		var run map[string]any
		if err := c.Do(ctx, "GET", "/v1/runs/"+url.PathEscape(id), nil, &run); err != nil {
			return err
		}
		switch run["status"] {
		case "succeeded", "failed", "timed_out", "cancelled", "denied", "interrupted", "expired", "skipped":
			// One last read for what was written just before the end.
			if err := c.Do(ctx, "GET", fmt.Sprintf("/v1/runs/%s/log?offset=%d", url.PathEscape(id), offset), nil, &chunk); err == nil {
				io.WriteString(e.stdout, chunk.Data)
			}
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
			body := map[string]any{"dir": dir, "confirmHome": confirmHome, "confirmation": typed, "password": pw}
			return getJSON(cmd.Context(), e, "POST", "/v1/authorize", body, func(w io.Writer, m map[string]any) {
				place, _ := m["place"].(map[string]any)
				rel, _ := m["released"].([]any)
				fmt.Fprintf(w, "authorized %v: %d waiting run(s) released\n", place["path"], len(rel))
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
			return getJSON(cmd.Context(), e, "GET", "/v1/places", nil, func(w io.Writer, ps []map[string]any) {
				printTable(w, ps, "", []string{"PATH", "KNOWN AS", "WHO", "WHEN"}, func(p map[string]any) []any {
					by := fmt.Sprint(p["by"])
					if d, _ := p["department"].(string); d != "" {
						by += " " + d
					}
					return []any{p["path"], by, nz(p["who"]), nz(p["when"])}
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
			return getJSON(cmd.Context(), e, "POST", "/v1/places/revoke", map[string]string{"dir": dir}, func(w io.Writer, m map[string]any) {
				fmt.Fprintf(w, "revoked %s\n", dir)
			})
		},
	})
	return cmd
}

func nz(v any) any {
	if v == nil {
		return ""
	}
	return v
}

func newInboxCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use: "inbox", Short: "What is waiting for you: held runs and pending approvals, most urgent first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return getJSON(cmd.Context(), e, "GET", "/v1/inbox", nil, func(w io.Writer, items []map[string]any) {
				if len(items) == 0 {
					fmt.Fprintln(w, "Nothing is waiting for you.")
					return
				}
				for _, it := range items {
					tier := ""
					if t, _ := it["tier"].(string); t != "" {
						tier = t + "  "
					}
					fmt.Fprintf(w, "%s%v\n    → %v\n", tier, it["asked"], it["answer"])
				}
			})
		},
	}
}

// dispatchState is GET /v1/dispatch (dispatch.State).
type dispatchState struct {
	Paused   bool       `json:"paused"`
	PausedAt *time.Time `json:"paused_at"`
	PausedBy string     `json:"paused_by"`
	Tasks    int        `json:"tasks"`
	Running  int        `json:"running"`
}

func printDispatchState(w io.Writer, st dispatchState) {
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
			return getJSON(cmd.Context(), e, "GET", "/v1/dispatch", nil, printDispatchState)
		},
	}
	for _, c := range []struct{ use, short, path string }{
		{"pause", "Pause dispatch: scheduled occurrences are recorded skipped until you resume (running runs go on)", "/v1/dispatch/pause"},
		{"resume", "Resume dispatch: scheduled runs start on their own again (occurrences skipped meanwhile do not run)", "/v1/dispatch/resume"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: c.use, Short: c.short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return getJSON(cmd.Context(), e, "POST", c.path, nil, printDispatchState)
			},
		})
	}
	return cmd
}
