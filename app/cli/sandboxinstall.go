package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// newSandboxInstallCmd is `airlock sandbox install [--manifest URL]`: it installs the
// micro-VM runtime and image in this process, with a progress bar on stderr.
func newSandboxInstallCmd(e *env) *cobra.Command {
	var manifest string
	cmd := &cobra.Command{
		Use:   "install [--manifest URL]",
		Short: "Install the micro-VM runtime and image for the sandbox execution mode, with progress",
		Long: "When the Airlock app or daemon runs, it does the install (its window shows the same progress);\n" +
			"otherwise this process does. " +
			"Detects KVM and a system QEMU, downloads the runtime (skipped when a usable qemu-system is\n" +
			"installed) and the image listed in the manifest (http(s)://, file:// or a path; default\n" +
			"$AIRLOCK_SANDBOX_MANIFEST), verifies every file's sha256 and installs it into the data\n" +
			"directory. Ctrl-C stops it; running it again resumes the download where it stopped.\n" +
			"Build an image with `make sandbox-image`, then: airlock sandbox install --manifest build/sandbox-image/manifest.json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if manifest == "" {
				manifest = e.getenv("AIRLOCK_SANDBOX_MANIFEST")
			}
			p, err := e.paths()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			bar := &progressBar{w: e.stderr, start: time.Now()}
			if e.json {
				bar.w = io.Discard
			}
			// A running app or daemon owns the install (one at a time, shown in its window):
			// ask it, and show its progress events.
			st, err := installThroughCore(ctx, e, manifest, bar)
			var nr *localapi.NotRunningError
			if errors.As(err, &nr) {
				if manifest == "" {
					return &exitError{code: ExitUsage, err: errors.New("no manifest: pass --manifest URL (build one with `make sandbox-image`: --manifest build/sandbox-image/manifest.json) or set AIRLOCK_SANDBOX_MANIFEST")}
				}
				in := vminstall.New(vminstall.Config{Dir: p.SandboxDir, ManifestURL: manifest, Publisher: bar})
				st, err = in.Install(ctx)
			}
			bar.finish()
			if err != nil {
				if errors.Is(err, context.Canceled) {
					err = errors.New("install cancelled; run it again to resume the download")
				}
				if e.json {
					e.print(st, nil)
				}
				return err
			}
			return e.print(st, func(w io.Writer) {
				fmt.Fprintf(w, "sandbox ready: runtime %s, image %s in %s\n", st.Runtime, st.Version, p.SandboxDir)
				if st.Support.Warning != "" {
					fmt.Fprintln(w, "warning:", st.Support.Warning)
				}
			})
		},
	}
	cmd.Flags().StringVar(&manifest, "manifest", "", "manifest URL or path (default $AIRLOCK_SANDBOX_MANIFEST)")
	return cmd
}

// progressBar draws the install's progress on one terminal line.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	stage string
	shown bool
}

// Publish implements vminstall.Publisher: it draws st's progress.
func (b *progressBar) Publish(st api.VMStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pr := st.Progress
	if pr.Stage != b.stage {
		if b.shown {
			fmt.Fprintln(b.w)
		}
		b.stage, b.shown, b.start = pr.Stage, false, time.Now()
		switch pr.Stage {
		case vminstall.StageRuntime:
			if st.Support.SystemQEMU != "" {
				fmt.Fprintf(b.w, "runtime: using the system QEMU %s (%s)\n", st.Support.SystemQEMU, st.Support.QEMUVersion)
			}
		}
	}
	if pr.Total == 0 || (pr.Stage != vminstall.StageRuntime && pr.Stage != vminstall.StageImage) {
		return
	}
	const width = 30
	filled := pr.Percent * width / 100
	speed := ""
	if el := time.Since(b.start).Seconds(); el > 0.2 {
		speed = fmt.Sprintf("  %s/s", humanBytes(int64(float64(pr.Received)/el)))
	}
	fmt.Fprintf(b.w, "\r%-7s [%s%s] %3d%%  %s / %s%s  %s\x1b[K", pr.Stage, strings.Repeat("#", filled), strings.Repeat("-", width-filled),
		pr.Percent, humanBytes(pr.Received), humanBytes(pr.Total), speed, pr.Artifact)
	b.shown = true
}

func (b *progressBar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprintln(b.w)
		b.shown = false
	}
}

// humanBytes prints a byte count as B, KB, MB or GB (powers of 1000).
func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// installThroughCore asks the running core to install (or joins its install) and feeds its
// "sandbox.install" events to bar until the install ends. Ctrl-C cancels the install.
// A *localapi.NotRunningError means no core runs.
func installThroughCore(ctx context.Context, e *env, manifest string, bar *progressBar) (api.VMStatus, error) {
	c, err := e.client()
	if err != nil {
		return api.VMStatus{}, err
	}
	if manifest != "" && !strings.Contains(manifest, "://") {
		// A path is the core's to open: make it absolute (the core runs elsewhere).
		if abs, err := filepath.Abs(manifest); err == nil {
			manifest = abs
		}
	}
	evctx, cancelEvents := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelEvents()
	events, err := c.Events(evctx, vminstall.Topic)
	if err != nil {
		return api.VMStatus{}, err
	}
	st, err := localapi.Call(ctx, c, api.InstallVM, api.VMInstallIn{Manifest: manifest})
	if err != nil {
		return st, err
	}
	fmt.Fprintln(bar.w, "installing through the running Airlock (its window shows the same progress)")
	running := st.Downloading
	for running {
		select {
		case ev, ok := <-events:
			if !ok {
				return st, errors.New("the Airlock core stopped during the install; run `airlock sandbox install` again to resume")
			}
			var s api.VMStatus
			if json.Unmarshal(ev.Payload, &s) != nil {
				continue
			}
			if !s.Downloading {
				// An event published before this install started (the core's start-up
				// probe) can arrive now: the install has ended only if the core says so.
				if now, err := localapi.Call(ctx, c, api.GetVMStatus, api.None{}); err == nil && now.Downloading {
					continue
				}
			}
			bar.Publish(s)
			running = s.Downloading
		case <-ctx.Done():
			_, _ = localapi.Call(context.WithoutCancel(ctx), c, api.CancelVMInstall, api.None{})
			return st, ctx.Err()
		}
	}
	if st, err = localapi.Call(context.WithoutCancel(ctx), c, api.GetVMStatus, api.None{}); err != nil {
		return st, err
	}
	if st.Error != "" {
		return st, errors.New(st.Error)
	}
	if !st.Ready() {
		return st, fmt.Errorf("the install ended but the micro-VM is not ready (runtime ready %v, image ready %v)", st.RuntimeReady, st.ImageReady)
	}
	return st, nil
}
