package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// newSandboxInstallCmd is `airlock sandbox install [--manifest URL]`: it installs the
// micro-VM runtime and image in this process, with a progress bar on stderr.
func newSandboxInstallCmd(e *env) *cobra.Command {
	var manifest string
	cmd := &cobra.Command{
		Use:   "install [--manifest URL]",
		Short: "Install the micro-VM runtime and image for the sandbox execution mode, with progress",
		Long: "Detects KVM and a system QEMU, downloads the runtime (skipped when a usable qemu-system is\n" +
			"installed) and the image listed in the manifest (http(s)://, file:// or a path; default\n" +
			"$AIRLOCK_SANDBOX_MANIFEST), verifies every file's sha256 and installs it into the data\n" +
			"directory. Ctrl-C stops it; running it again resumes the download where it stopped.\n" +
			"Build an image with `make sandbox-image`, then: airlock sandbox install --manifest build/sandbox-image/manifest.json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if manifest == "" {
				manifest = e.getenv("AIRLOCK_SANDBOX_MANIFEST")
			}
			if manifest == "" {
				return &exitError{code: ExitUsage, err: errors.New("no manifest: pass --manifest URL (build one with `make sandbox-image`: --manifest build/sandbox-image/manifest.json) or set AIRLOCK_SANDBOX_MANIFEST")}
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
			in := vminstall.New(vminstall.Config{Dir: p.SandboxDir, ManifestURL: manifest, Publisher: bar})
			st, err := in.Install(ctx)
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

// Publish implements vminstall.Publisher.
func (b *progressBar) Publish(topic string, payload any) {
	st, ok := payload.(vminstall.Status)
	if topic != vminstall.Topic || !ok {
		return
	}
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
