package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/sandbox/egress"
)

// TestRunNetworkSummary: a real scheduled run under network_access = "allowlist" curls
// an allowed test server twice, a denied domain, and an unknown one a person allows.
// GET /v1/runs/{id}/network (what the run view and `airlock runs show` read) folds the
// run's connections per domain: ports, connections, allowed/refused/asked, bytes and
// duration. A run without connections has an empty
// list, and an unknown run is not found.
func TestRunNetworkSummary(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	c, repo, port, hits := allowlistCore(t, "allowed_domains = [\"127.0.0.1\"]\ndenied_domains = [\"denied.test\"]\nallow_local = true\n")
	ctx := context.Background()
	cl := localapi.NewClient(c.Paths.Socket)
	// localhost is in neither list: it asks, and the person allows it.
	script := fmt.Sprintf(`curl -sS --max-time 20 http://127.0.0.1:%[1]d/one; curl -sS --max-time 20 http://127.0.0.1:%[1]d/two
curl -sS --max-time 20 http://denied.test/; curl -sS --max-time 60 http://localhost:%[1]d/asked; true`, port)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "net", Cwd: repo, Argv: []string{"sh", "-c", script}})
	quiet := createTask(t, c, dispatch.TaskSpec{Name: "quiet", Cwd: repo, Argv: []string{"true"}})
	asked := answerNext(t, c, true)
	finished := func(name string) dispatch.Run {
		t.Helper()
		got, log := runTask(t, c, name)
		if got.Status != dispatch.StatusSucceeded {
			t.Fatalf("run: %s (%s)\n%s", got.Status, got.Reason, log)
		}
		return got
	}
	run := finished(tk.Name)
	if _, ok := <-asked; !ok {
		t.Fatal("the unknown domain was not asked")
	}
	if hits.Load() != 3 {
		t.Fatalf("the test server got %d requests, want 3", hits.Load())
	}
	id := strconv.FormatUint(uint64(run.ID), 10)
	got, err := localapi.Call(ctx, cl, api.GetRunNetwork, api.None{}, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != run.ID || len(got.Domains) != 3 {
		t.Fatalf("summary: %+v; want 3 domains", got)
	}
	for _, want := range []struct {
		domain                             string
		port, conns, allowed, refused, ask int
		reason                             string
		bytes                              bool
	}{
		{"127.0.0.1", port, 2, 2, 0, 0, "allowed by allowed_domains", true},
		{"denied.test", 80, 1, 0, 1, 0, "denied by denied_domains", false},
		{"localhost", port, 1, 1, 0, 1, "allowed by the person", true},
	} {
		i := slices.IndexFunc(got.Domains, func(d api.DomainTraffic) bool { return d.Domain == want.domain })
		if i < 0 {
			t.Errorf("%s is not in the summary: %+v", want.domain, got.Domains)
			continue
		}
		d := got.Domains[i]
		if !slices.Equal(d.Ports, []int{want.port}) || d.Connections != want.conns || d.Allowed != want.allowed || d.Refused != want.refused ||
			d.Asked != want.ask || d.LastReason != want.reason {
			t.Errorf("%s: %+v; want %+v", want.domain, d, want)
		}
		if moved := d.BytesUp > 0 && d.BytesDown > 0; moved != want.bytes {
			t.Errorf("%s: %d B up, %d B down; bytes moved = %v, want %v", want.domain, d.BytesUp, d.BytesDown, moved, want.bytes)
		}
	}

	// The same through the façade's core method, and a run that connected nowhere.
	if again, err := c.RunNetwork(WindowCaller(), run.ID); err != nil || len(again.Domains) != 3 {
		t.Errorf("RunNetwork: %+v, %v", again, err)
	}
	q := finished(quiet.Name)
	if none, err := localapi.Call(ctx, cl, api.GetRunNetwork, api.None{}, strconv.FormatUint(uint64(q.ID), 10)); err != nil || none.Domains == nil || len(none.Domains) != 0 {
		t.Errorf("a run without connections: %+v, %v; want an empty list", none, err)
	}
	if _, err := localapi.Call(ctx, cl, api.GetRunNetwork, api.None{}, "999999"); !errors.Is(err, &api.Error{Code: api.CodeNotFound}) {
		t.Errorf("an unknown run: %v; want not_found", err)
	}
	if _, err := localapi.Call(ctx, cl, api.GetRunNetwork, api.None{}, "seven"); !errors.Is(err, &api.Error{Code: api.CodeBadRequest}) {
		t.Errorf("a run id that is no number: %v; want bad_request", err)
	}
}

// TestPrunedRunTakesItsConnections: when retention removes a run record (here beyond
// dispatch.run_max_count = 1), the network connections recorded for it go in the same
// transaction; the kept run's stay.
func TestPrunedRunTakesItsConnections(t *testing.T) {
	base := vartmp.Dir(t, "airlock-prune-net-")
	cfg := filepath.Join(base, "airlock", "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("[dispatch]\nrun_max_count = 1\n"), 0o600)
	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)
	createTask(t, c, dispatch.TaskSpec{Name: "fetch", Cwd: repo, Argv: []string{"true"}})
	var runs []dispatch.Run
	for i := 0; i < 2; i++ {
		r, _ := runTask(t, c, "fetch")
		c.recordConnection(r.ID, egress.Record{Start: time.Now(), Domain: "example.test", Port: 443, Verdict: egress.Allow})
		runs = append(runs, r)
	}
	if n, err := c.Dispatch.PruneRuns(ctx); err != nil || n != 1 {
		t.Fatalf("prune: %d removed, %v; want the older run", n, err)
	}
	count := func(id uint) (n int64) {
		c.DB.Model(&NetworkConnection{}).Where("run_id = ?", id).Count(&n)
		return n
	}
	if old, kept := count(runs[0].ID), count(runs[1].ID); old != 0 || kept != 1 {
		t.Errorf("connection rows after the prune: %d of the removed run (want 0), %d of the kept one (want 1)", old, kept)
	}
}
