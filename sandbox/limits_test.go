package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestResolveLimits: [limits] is resolved like every other setting — default, then
// config.toml, then a trusted project, then the flag layer (a run's recorded policy, which
// holds its department's and task's limits) — and an untrusted project may only lower it.
func TestResolveLimits(t *testing.T) {
	yes := true
	cases := []struct {
		name    string
		file    Layer
		flags   Layer
		project string
		trust   bool
		want    Limits
		req     bool
		src     map[string]string // key → a part of its source
		ignored string
	}{
		{name: "defaults", want: DefaultLimits, src: map[string]string{KeyLimitsMemory: "default", KeyLimitsPids: "default"}},
		{name: "config.toml", file: Layer{Limits: Limits{Memory: "2G", Pids: 512}, LimitsRequired: &yes},
			want: Limits{Memory: "2G", Pids: 512, CPU: "200%"}, req: true, src: map[string]string{KeyLimitsMemory: "config", KeyLimitsCPU: "default"}},
		{name: "the recorded policy over config.toml", file: Layer{Limits: Limits{Memory: "2G", Pids: 512}},
			flags: Layer{Limits: Limits{Pids: 64, CPU: "50%"}}, want: Limits{Memory: "2G", Pids: 64, CPU: "50%"}, src: map[string]string{KeyLimitsPids: "flag"}},
		{name: "an untrusted project lowers", project: "[limits]\nmemory = \"1GiB\"\npids = 100\nrequired = true\n",
			want: Limits{Memory: "1GiB", Pids: 100, CPU: "200%"}, req: true, src: map[string]string{KeyLimitsMemory: "project", KeyLimitsRequired: "project"}},
		{name: "an untrusted project cannot raise", file: Layer{Limits: Limits{CPU: "100%"}}, project: "[limits]\ncpu = \"max\"\nmemory = \"64GiB\"\n",
			want: Limits{Memory: "4GiB", Pids: 2048, CPU: "100%"}, ignored: "limits.cpu"},
		{name: "an untrusted project lowers below the recorded policy", flags: Layer{Limits: Limits{Pids: 4096}}, project: "[limits]\npids = 256\n",
			want: Limits{Memory: "4GiB", Pids: 256, CPU: "200%"}},
		{name: "a trusted project raises", project: "[limits]\ncpu = \"max\"\n", trust: true, want: Limits{Memory: "4GiB", Pids: 2048, CPU: "max"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var projects []*ProjectPolicy
			if tc.project != "" {
				projects = []*ProjectPolicy{writeProject(t, dir, tc.project)}
			}
			p, err := Resolve(Inputs{Cwd: dir, Home: dir, Env: envMap(nil), File: tc.file, Flags: tc.flags, Project: projects, TrustProject: tc.trust})
			if err != nil {
				t.Fatal(err)
			}
			if p.Limits != tc.want || p.LimitsRequired != tc.req {
				t.Fatalf("limits %+v required %v, want %+v %v", p.Limits, p.LimitsRequired, tc.want, tc.req)
			}
			for key, part := range tc.src {
				if !strings.Contains(p.Sources[key].String(), part) {
					t.Errorf("source of %s = %q, want it to name %q", key, p.Sources[key], part)
				}
			}
			if tc.ignored != "" {
				found := false
				for _, ig := range p.Ignored {
					found = found || (ig.Key == tc.ignored && strings.Contains(ig.Reason, "may only tighten"))
				}
				if !found {
					t.Errorf("ignored %+v, want %s ignored with the reason", p.Ignored, tc.ignored)
				}
			}
		})
	}
}

// TestResolveRefusesBadLimits: a bad value is an error naming the key, the layer it came
// from and how to write it.
func TestResolveRefusesBadLimits(t *testing.T) {
	for _, tc := range []struct {
		layer Layer
		want  []string
	}{
		{Layer{Limits: Limits{Memory: "lots"}}, []string{"limits.memory", "config", `"lots" is not a size`, "max"}},
		{Layer{Limits: Limits{Memory: "1K"}}, []string{"limits.memory", "below the 4MiB"}},
		{Layer{Limits: Limits{Pids: 3}}, []string{"limits.pids", "pids = 3", "between 8"}},
		{Layer{Limits: Limits{CPU: "2"}}, []string{"limits.cpu", `cpu "2"`, `"200%"`}},
	} {
		_, err := Resolve(Inputs{Cwd: t.TempDir(), Env: envMap(nil), File: tc.layer, FilePath: "/c/config.toml"})
		if !errors.Is(err, ErrBadLimit) {
			t.Fatalf("%+v: err %v, want ErrBadLimit", tc.layer.Limits, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q does not say %q", tc.layer.Limits, err, w)
			}
		}
	}
}

func TestLimitValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4GiB", 4 << 30, true}, {"2G", 2 << 30, true}, {"512MiB", 512 << 20, true}, {"512M", 512 << 20, true},
		{"1GB", 1e9, true}, {"max", 0, true}, {"MAX", 0, true}, {"8388608", 8 << 20, true},
		{"", 0, false}, {"-1G", 0, false}, {"1.5G", 0, false}, {"99999999999T", 0, false}, {"2 GiB", 2 << 30, true},
	} {
		got, err := api.ParseMemoryLimit(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("memory %q = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"200%", 200, true}, {"50%", 50, true}, {"max", 0, true}, {"0%", 0, false}, {"200", 0, false}, {"abc%", 0, false}} {
		got, err := api.ParseCPULimit(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("cpu %q = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
