package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/testdb"
)

// BenchmarkCoreAt1MRuns measures, with 10,000 tasks and 1,000,000 runs in the database:
// the core's start until it answers on its socket, after a clean stop and (the reference,
// the whole-file check every start used to pay) after an unclean one; and `airlock inbox`
// and `airlock runs list` over the socket.
func BenchmarkCoreAt1MRuns(b *testing.B) {
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

	// start runs a core until it answers, and returns it with its stop.
	start := func(b *testing.B) (*Core, func()) {
		c, err := Open(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		ready := make(chan struct{})
		c.OnReady = func() { close(ready) }
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx, nil) }()
		select {
		case <-ready:
		case err := <-done:
			b.Fatal(err)
		}
		if _, err := localapi.Call(ctx, localapi.NewClient(c.Paths.Socket), api.GetStatus, api.None{}); err != nil {
			b.Fatal(err)
		}
		return c, func() { cancel(); <-done; c.Close() }
	}
	b.Run("start-after-clean-stop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, stop := start(b)
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	})
	b.Run("reference-start-after-unclean-stop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			db := testdb.Open(b, dbPath)
			db.Exec("UPDATE core_starts SET stopped_at = NULL WHERE id = (SELECT MAX(id) FROM core_starts)")
			closeDatabase(db)
			b.StartTimer()
			_, stop := start(b)
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	})
	c, stop := start(b)
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
