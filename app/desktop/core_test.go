package desktop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/app"
)

// openCore opens a real core (SQLite, broker, departments, dispatch) in a private home.
func openCore(tb testing.TB) (*app.Core, string) {
	tb.Helper()
	return openTestCore(tb, "", nil)
}

// openCoreWith opens a real core whose config.toml holds text and whose environment
// adds extra.
func openCoreWith(t *testing.T, text string, extra map[string]string) *app.Core {
	t.Helper()
	core, _ := openTestCore(t, text, extra)
	return core
}

// openTestCore opens a real core in a private home under a fresh temporary directory:
// config.toml holds text ("" writes none) and extra adds to the core's environment. It
// returns the core and the home directory.
func openTestCore(tb testing.TB, text string, extra map[string]string) (*app.Core, string) {
	tb.Helper()
	return openTestCoreAt(tb, tb.TempDir(), text, extra)
}

// openTestCoreAt is openTestCore with its files under base: a second core opened at the
// same base after the first is closed is Airlock started again.
func openTestCoreAt(tb testing.TB, base, text string, extra map[string]string) (*app.Core, string) {
	tb.Helper()
	home := filepath.Join(base, "home")
	runtime := filepath.Join(base, "run")
	configDir := filepath.Join(base, "airlock", "config")
	for _, d := range []string{home, runtime, configDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "XDG_RUNTIME_DIR": runtime, "AIRLOCK_HOME": filepath.Join(base, "airlock")}
	for k, v := range extra {
		env[k] = v
	}
	if text != "" {
		if err := os.WriteFile(filepath.Join(configDir, "config.toml"), []byte(text), 0o640); err != nil {
			tb.Fatal(err)
		}
	}
	core, err := app.Open(context.Background(), app.Options{Kind: app.KindDaemon, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		tb.Fatalf("open the core: %v", err)
	}
	tb.Cleanup(func() { _ = core.Close() })
	return core, home
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
