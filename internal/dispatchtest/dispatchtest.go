// Package dispatchtest holds what the tests of dispatch's adapters (dispatch/sandboxexec,
// dispatch/brokerapprovals) share: a directory for a test, the core's
// resolution of a run's recorded policy, and waiting for a run to reach a state. Only tests import it. It lives outside dispatch/
// because it resolves through app/policy, which no dispatch package may import (R5).
package dispatchtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
)

// Root makes a directory for one test's files and returns it with its links resolved. It
// is under /var/tmp, not /tmp: every sandbox gets a private /tmp, so a run would not see
// it. The test is skipped without bubblewrap, which every run here needs.
func Root(t testing.TB, prefix string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	tmp, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	root, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// RecordedPolicy is the core's resolution of a run's recorded policy with no config.toml
// and an environment that holds only HOME ("" keeps the process's home).
func RecordedPolicy(home string) func(dispatch.ExecSpec) (sandbox.Policy, error) {
	return func(spec dispatch.ExecSpec) (sandbox.Policy, error) {
		r, err := policy.Resolve(policy.Inputs{Getenv: HomeOnly(home), Flags: policy.Flags{Sandbox: dispatch.SandboxLayer(spec.Policy)}, Recorded: true, Cwd: spec.Dir})
		return r.Sandbox, err
	}
}

// HomeOnly is an environment with HOME and nothing else.
func HomeOnly(home string) func(string) string {
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

// WaitRun polls run id until its status is one of states and returns it; past limit the
// test fails with the status it has.
func WaitRun(t testing.TB, d *dispatch.Dispatcher, id uint, limit time.Duration, states ...string) dispatch.Run {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r, err := d.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if r.Status == s {
				return r
			}
		}
	}
	r, _ := d.Run(context.Background(), id)
	t.Fatalf("run #%d is %s (%s), want %v", id, r.Status, r.Reason, states)
	return r
}
