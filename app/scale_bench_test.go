package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/testdb"
)

// BenchmarkCoreAt1MRuns measures, with 10,000 tasks and 1,000,000 runs in the database:
// the core's start until it answers on its socket (answer-ms) and until dispatch has
// started too (dispatch-ready-ms, when the daemon says "running"), after a clean stop and
// (the reference: the whole-file check every start used to pay) after an unclean one; and
// `airlock inbox` and `airlock runs list` over the socket.
func BenchmarkCoreAt1MRuns(b *testing.B) {
	// The core logs every start at length (the digest lists every held run).
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	base := b.TempDir()
	env := map[string]string{"HOME": filepath.Join(base, "home"), "XDG_RUNTIME_DIR": filepath.Join(base, "run"), "AIRLOCK_HOME": filepath.Join(base, "airlock")}
	for _, d := range []string{env["HOME"], env["XDG_RUNTIME_DIR"]} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	opts := Options{Kind: KindDaemon, Getenv: func(k string) string { return env[k] }}
	ctx := context.Background()
	c, err := Open(ctx, opts) // creates and migrates the database
	if err != nil {
		b.Fatal(err)
	}
	dbPath := c.Paths.Database
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	db := testdb.Open(b, dbPath)
	testdb.SeedScale(b, db, 10000, 1000000, env["HOME"], int64(dispatch.DefaultHoldDeadline))
	if err := closeDatabase(db); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(dbPath); err == nil {
		b.Logf("database: %d MiB", fi.Size()>>20)
	}

	// start runs a core until it answers and dispatch has started; it returns the core,
	// its stop, and how long it took to answer on the socket and to be ready.
	start := func(b *testing.B) (*Core, func(), time.Duration, time.Duration) {
		t0 := time.Now()
		c, err := Open(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		ready := make(chan struct{})
		c.OnReady = func() { close(ready) }
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx, nil) }()
		cl := localapi.NewClient(c.Paths.Socket)
		var answered time.Duration
		for {
			if _, err := localapi.Call(ctx, cl, api.GetStatus, api.None{}); err == nil {
				answered = time.Since(t0)
				break
			}
			select {
			case err := <-done:
				b.Fatal(err)
			case <-time.After(time.Millisecond):
			}
		}
		select {
		case <-ready:
		case err := <-done:
			b.Fatal(err)
		}
		return c, func() { cancel(); <-done; c.Close() }, answered, time.Since(t0)
	}
	starts := func(b *testing.B, before func()) {
		var answer, ready time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if before != nil {
				before()
			}
			b.StartTimer()
			_, stop, a, r := start(b)
			b.StopTimer()
			answer += a
			ready += r
			stop()
			b.StartTimer()
		}
		b.ReportMetric(float64(answer.Microseconds())/float64(b.N)/1000, "answer-ms")
		b.ReportMetric(float64(ready.Microseconds())/float64(b.N)/1000, "dispatch-ready-ms")
	}
	b.Run("start-after-clean-stop", func(b *testing.B) { starts(b, nil) })
	b.Run("reference-start-after-unclean-stop", func(b *testing.B) {
		starts(b, func() {
			db := testdb.Open(b, dbPath)
			db.Exec("UPDATE core_starts SET stopped_at = NULL WHERE id = (SELECT MAX(id) FROM core_starts)")
			closeDatabase(db)
		})
	})
	c, stop, _, _ := start(b)
	defer stop()
	cl := localapi.NewClient(c.Paths.Socket)
	b.Run("inbox", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := localapi.Call(ctx, cl, api.Inbox, api.None{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, q := range []struct {
		name string
		q    api.RunQuery
	}{{"runs-list", api.RunQuery{}}, {"runs-list-waiting", api.RunQuery{Waiting: true}}, {"runs-list-task", api.RunQuery{Task: "t05000"}}} {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := localapi.Call(ctx, cl, api.ListRuns, q.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
