// Command execbench compares, side by side and interleaved (so machine load
// hits every variant alike), the per-invocation cost of: bare /bin/true, raw
// bwrap with the mounts Airlock uses (with and without the same seccomp
// filter), sandbox.Exec in-process with the network off and on (the run's own
// namespace connected out through slirp4netns), and, when -airlock is given,
// `airlock exec -- /bin/true` with the network off and on. It prints medians, the
// ratios to raw bwrap with seccomp, and network on against network off.
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
	"time"

	"github.com/airlock-app/airlock/sandbox"
)

func main() {
	n := flag.Int("n", 200, "invocations per variant")
	airlock := flag.String("airlock", "", "path to the airlock binary (adds `airlock exec -- /bin/true`)")
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
	pNet.Network = true
	argsSeccomp := append(append([]string(nil), args...), "--seccomp", "3", "--", "/bin/true")
	args = append(args, "--", "/bin/true")
	filter, err := sandbox.BwrapSeccompFilter(p)
	if err != nil {
		log.Fatal(err)
	}
	rawSeccomp := func() error {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer r.Close()
		_, _ = w.Write(filter)
		w.Close()
		c := exec.Command(bwrap, argsSeccomp...)
		c.ExtraFiles = []*os.File{r}
		return c.Run()
	}

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
	if *airlock != "" {
		for _, v := range []struct{ name, net string }{{"airlock exec -- /bin/true", "--network=false"}, {"airlock exec --network", "--network"}} {
			vars = append(vars, &variant{name: v.name, run: func() error {
				c := exec.Command(*airlock, "exec", "--sandbox", "workspace-write", v.net, "--", "/bin/true")
				c.Dir = dir
				return c.Run()
			}})
		}
	}
	for _, v := range vars { // warm up
		if err := v.run(); err != nil {
			log.Fatalf("%s: %v", v.name, err)
		}
	}
	for i := 0; i < *n; i++ {
		for _, v := range vars {
			start := time.Now()
			if err := v.run(); err != nil {
				log.Fatalf("%s: %v", v.name, err)
			}
			v.ns = append(v.ns, float64(time.Since(start).Nanoseconds()))
		}
	}
	med := func(xs []float64) float64 { s := slices.Clone(xs); slices.Sort(s); return s[len(s)/2] }
	raw := med(vars[2].ns)
	fmt.Printf("%-28s %12s %12s %10s\n", "variant", "median ms", "p90 ms", "vs raw+seccomp")
	for _, v := range vars {
		s := slices.Clone(v.ns)
		slices.Sort(s)
		m := med(v.ns)
		fmt.Printf("%-28s %12.2f %12.2f %9.2fx  (%+.2f ms)\n", v.name, m/1e6, s[len(s)*9/10]/1e6, m/raw, (m-raw)/1e6)
	}
	ratio := func(name string, on, off *variant) {
		fmt.Printf("%-28s %9.2fx  (%+.2f ms)\n", name, med(on.ns)/med(off.ns), (med(on.ns)-med(off.ns))/1e6)
	}
	fmt.Println("network on vs off:")
	ratio("  sandbox.Exec", vars[4], vars[3])
	if *airlock != "" {
		ratio("  airlock exec", vars[6], vars[5])
	}
}
