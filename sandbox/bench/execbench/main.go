//go:build linux

// Command execbench compares, side by side and interleaved (so machine load
// hits every variant alike), the per-invocation cost of: bare /bin/true, raw
// bwrap with the mounts Airlock uses (with and without the same seccomp
// filter), sandbox.Exec in-process with the network off and on (the run's own
// namespace connected out through slirp4netns), and, when -airlock is given,
// `airlock exec -- /bin/true` (NETWORK= adds runs with --network values; "allowlist"
// needs a running core to serve the proxy, and is refused without one). It prints
// medians, the ratios to raw bwrap with seccomp, and each network mode against off.
//
// With -floor (the program in ./floor, built static) it also runs an empty Go
// program and that program starting raw bwrap + seccomp as its child: the least
// a Go front-end such as `airlock exec` can add to bwrap on this machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/airlock-app/airlock/sandbox"
)

func main() {
	n := flag.Int("n", 200, "invocations per variant")
	var airlocks multi
	flag.Var(&airlocks, "airlock", "path to an airlock binary (adds `airlock exec -- /bin/true`; repeatable, to compare builds side by side)")
	var modes multi
	flag.Var(&modes, "network", "also run each airlock with this --network value (repeatable: on, allowlist, ...)")
	floor := flag.String("floor", "", "path to the floor program (adds an empty Go program and a Go parent of raw bwrap)")
	var parents multi
	flag.Var(&parents, "parent", "another program run as the parent of raw bwrap + seccomp, like -floor's (repeatable; for what-if builds)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "execbench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	p, err := sandbox.Resolve(sandbox.Inputs{Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		log.Fatal("bwrap not found: apt install bubblewrap")
	}
	args, err := sandbox.BwrapArgs(p, nil, dir)
	if err != nil {
		log.Fatal(err)
	}
	pNet := p
	pNet.Network = sandbox.NetworkOn
	argsSeccomp := append(append([]string(nil), args...), "--seccomp", "3", "--", "/bin/true")
	args = append(args, "--", "/bin/true")
	filter, err := sandbox.BwrapSeccompFilter(p)
	if err != nil {
		log.Fatal(err)
	}
	// withSeccomp runs prog args... with the filter on fd 3, as Airlock passes it to bwrap.
	withSeccomp := func(prog string, args ...string) error {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer r.Close()
		_, _ = w.Write(filter)
		w.Close()
		c := exec.Command(prog, args...)
		c.ExtraFiles = []*os.File{r}
		return c.Run()
	}
	rawSeccomp := func() error { return withSeccomp(bwrap, argsSeccomp...) }

	type variant struct {
		name string
		run  func() error
		ns   []float64
	}
	vars := []*variant{
		{name: "bare /bin/true", run: func() error { return exec.Command("/bin/true").Run() }},
		{name: "raw bwrap (same mounts)", run: func() error { return exec.Command(bwrap, args...).Run() }},
		{name: "raw bwrap + same seccomp", run: rawSeccomp},
		{name: "sandbox.Exec (in-process)", run: func() error {
			res, err := sandbox.Exec(context.Background(), sandbox.ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			return err
		}},
		{name: "sandbox.Exec, network on", run: func() error {
			res, err := sandbox.Exec(context.Background(), sandbox.ExecRequest{Policy: pNet, Argv: []string{"/bin/true"}})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			return err
		}},
	}
	if *floor != "" {
		vars = append(vars,
			&variant{name: "empty Go program", run: func() error { return exec.Command(*floor).Run() }},
			&variant{name: "Go parent + raw bwrap+seccomp", run: func() error {
				return withSeccomp(*floor, append([]string{bwrap}, argsSeccomp...)...)
			}},
			&variant{name: "Go ForkExec+wait4 + raw bwrap", run: func() error {
				return withSeccomp(*floor, append([]string{"-fork", bwrap}, argsSeccomp...)...)
			}},
			&variant{name: "Go exec in place of raw bwrap", run: func() error {
				return withSeccomp(*floor, append([]string{"-exec", bwrap}, argsSeccomp...)...)
			}})
	}
	for _, p := range parents {
		vars = append(vars, &variant{name: filepath.Base(p) + " + raw bwrap", run: func() error {
			return withSeccomp(p, append([]string{bwrap}, argsSeccomp...)...)
		}})
	}
	// Each airlock's network variants, with its network-off variant to compare with.
	type withOff struct{ variant, off *variant }
	var airlockVars []withOff
	for _, a := range airlocks {
		name := "airlock exec -- /bin/true"
		if len(airlocks) > 1 {
			name = filepath.Base(a) + " exec -- /bin/true"
		}
		off := &variant{name: name, run: func() error {
			c := exec.Command(a, "exec", "--", "/bin/true")
			c.Dir = dir
			return c.Run()
		}}
		vars = append(vars, off)
		for _, m := range modes {
			flagArgs := []string{"--network=" + m}
			if m == "on" {
				flagArgs = []string{"--network"} // the boolean form
			}
			v := &variant{name: strings.Replace(name, "exec", "exec "+strings.Join(flagArgs, " "), 1), run: func() error {
				c := exec.Command(a, append(append([]string{"exec"}, flagArgs...), "--", "/bin/true")...)
				c.Dir = dir
				return c.Run()
			}}
			vars = append(vars, v)
			airlockVars = append(airlockVars, withOff{v, off})
		}
	}
	// An allowlist variant measures the proxy only if a core serves it: without one
	// `airlock exec` runs as off (and warns), which would be timed as off.
	if slices.Contains(modes, "allowlist") {
		for _, a := range airlocks {
			c := exec.Command(a, "exec", "--network=allowlist", "--", "sh", "-c", `test -n "$HTTPS_PROXY"`)
			c.Dir = dir
			if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
				log.Fatalf("%s exec --network=allowlist is not connected to a core's egress proxy (%v): %s\nstart one first (AIRLOCK_HOME=... airlockd; scripts/bench.sh does)", a, err, out)
			}
		}
	}
	for _, v := range vars { // warm up
		if err := v.run(); err != nil {
			log.Fatalf("%s: %v", v.name, err)
		}
	}
	for i := 0; i < *n; i++ {
		// Each round starts at another variant, so that none always follows the same one
		// (a run's leftovers, such as the inodes of removed placeholders, cost the next).
		for j := range vars {
			v := vars[(i+j)%len(vars)]
			start := time.Now()
			if err := v.run(); err != nil {
				log.Fatalf("%s: %v", v.name, err)
			}
			v.ns = append(v.ns, float64(time.Since(start).Nanoseconds()))
		}
	}
	med := func(xs []float64) float64 { s := slices.Clone(xs); slices.Sort(s); return s[len(s)/2] }
	raw := med(vars[2].ns)
	fmt.Printf("%-46s %8s %10s %8s %10s\n", "variant", "p10 ms", "median ms", "p90 ms", "vs raw+seccomp (median)")
	for _, v := range vars {
		s := slices.Clone(v.ns)
		slices.Sort(s)
		m := med(v.ns)
		fmt.Printf("%-46s %8.2f %10.2f %8.2f %9.2fx  (%+.2f ms)\n", v.name, s[len(s)/10]/1e6, m/1e6, s[len(s)*9/10]/1e6, m/raw, (m-raw)/1e6)
	}
	ratio := func(name string, on, off *variant) {
		fmt.Printf("%-48s %9.2fx  (%+.2f ms)\n", name, med(on.ns)/med(off.ns), (med(on.ns)-med(off.ns))/1e6)
	}
	byName := map[string]*variant{}
	for _, v := range vars {
		byName[v.name] = v
	}
	fmt.Println("network on vs off:")
	if on, off := byName["sandbox.Exec, network on"], byName["sandbox.Exec (in-process)"]; on != nil && off != nil {
		ratio("  sandbox.Exec", on, off)
	}
	for _, v := range airlockVars {
		if v.off != nil {
			ratio("  "+v.variant.name, v.variant, v.off)
		}
	}
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
