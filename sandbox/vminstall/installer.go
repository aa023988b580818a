package vminstall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

// Config configures an Installer.
type Config struct {
	Dir         string       // where runtime and image live (paths.Paths.SandboxDir)
	ManifestURL string       // http(s)://, file:// or a local path
	Publisher   Publisher    // nil = no events
	HTTPClient  *http.Client // nil = http.DefaultClient
	Logger      *slog.Logger // nil = slog.Default()
	// Detect replaces the host probe (tests force "no system QEMU" with it).
	Detect func(ctx context.Context) Support
	// RetryGap is the pause before a resumed retry, times the attempt (0 = 500 ms).
	RetryGap time.Duration
}

// Installer runs at most one install at a time and remembers the last status.
type Installer struct {
	cfg Config

	mu     sync.Mutex
	status Status
	run    *installRun
}

// installRun is one install shared by every caller that asked while it ran.
type installRun struct {
	cancel   context.CancelFunc
	done     chan struct{}
	manifest string
	// background runs (Start) are not cancelled when the callers of Install go away.
	background bool
	waiters    int
	status     Status
	err        error
}

// New returns an Installer; nothing runs until Install or Refresh.
func New(cfg Config) *Installer {
	if cfg.Detect == nil {
		cfg.Detect = Detect
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RetryGap == 0 {
		cfg.RetryGap = 500 * time.Millisecond
	}
	return &Installer{cfg: cfg}
}

// Status returns the last known status without probing.
func (i *Installer) Status() Status {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.status
}

// Refresh probes the host and the installed files and publishes the result. While an
// install runs it returns that install's status.
func (i *Installer) Refresh(ctx context.Context) Status {
	i.mu.Lock()
	if i.run != nil {
		st := i.status
		i.mu.Unlock()
		return st
	}
	i.mu.Unlock()
	st := i.probe(ctx)
	i.mu.Lock()
	// An install that started while probing owns the status: publishing the probe's
	// (not downloading) would tell the window and the CLI that the install had ended.
	stored := i.run == nil
	if stored {
		i.status = st
	} else {
		st = i.status
	}
	i.mu.Unlock()
	if stored {
		i.publish(st)
	}
	return st
}

// probe computes the status from the host and the state file.
func (i *Installer) probe(ctx context.Context) Status {
	sup := i.cfg.Detect(ctx)
	st := Status{Supported: sup.Supported, Support: sup}
	if !sup.Supported {
		st.Error = sup.Reason
		return st
	}
	inst, err := LoadInstalled(i.cfg.Dir)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Version = inst.ManifestVersion
	switch {
	case sup.SystemQEMU != "":
		st.RuntimeReady, st.Runtime = true, sup.SystemQEMU
	case inst.present(i.cfg.Dir, KindRuntime):
		st.RuntimeReady, st.Runtime = true, inst.Path(i.cfg.Dir, KindRuntime)
	}
	st.ImageReady = inst.present(i.cfg.Dir, KindKernel) && inst.present(i.cfg.Dir, KindRootfs)
	if st.Ready() {
		st.Progress = Progress{Stage: StageReady, Percent: 100}
	}
	return st
}

// Install runs detect → runtime → image → ready, or joins the install already running and
// returns its result. When every caller's ctx is done the install is cancelled (its .part
// files stay for a later resume); Cancel stops it for everyone.
func (i *Installer) Install(ctx context.Context) (Status, error) {
	return i.InstallFrom(ctx, "")
}

// InstallFrom is Install from manifestURL ("" = Config.ManifestURL). A caller that joins a
// running install gets that install, whatever its manifest.
func (i *Installer) InstallFrom(ctx context.Context, manifestURL string) (Status, error) {
	i.mu.Lock()
	r := i.startLocked(manifestURL)
	r.waiters++
	i.mu.Unlock()

	select {
	case <-r.done:
		return r.status, r.err
	case <-ctx.Done():
		i.mu.Lock()
		r.waiters--
		if r.waiters == 0 && !r.background {
			r.cancel()
		}
		i.mu.Unlock()
		return i.Status(), ctx.Err()
	}
}

// Start begins an install in the background (from manifestURL, "" = Config.ManifestURL),
// or finds the one running, and returns the status at once; the install then runs until
// it ends or Cancel stops it. Progress arrives on the Publisher; Wait waits for the end.
func (i *Installer) Start(manifestURL string) Status {
	i.mu.Lock()
	defer i.mu.Unlock()
	r := i.startLocked(manifestURL)
	r.background = true
	return i.status
}

// Wait blocks until no install runs (or ctx is done) and returns the status.
func (i *Installer) Wait(ctx context.Context) (Status, error) {
	i.mu.Lock()
	r := i.run
	i.mu.Unlock()
	if r == nil {
		return i.Status(), nil
	}
	select {
	case <-r.done:
		return r.status, r.err
	case <-ctx.Done():
		return i.Status(), ctx.Err()
	}
}

// startLocked returns the running install or starts one; i.mu is held.
func (i *Installer) startLocked(manifestURL string) *installRun {
	if i.run != nil {
		return i.run
	}
	if manifestURL == "" {
		manifestURL = i.cfg.ManifestURL
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &installRun{cancel: cancel, done: make(chan struct{}), manifest: manifestURL}
	i.run = r
	st := i.status
	st.Downloading, st.Error = true, ""
	st.Progress = Progress{Stage: StageDetect}
	i.status = st
	go i.execute(rctx, r)
	return r
}

// Cancel stops the running install, if any. The .part files stay so the next install resumes.
func (i *Installer) Cancel() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.run != nil {
		i.run.cancel()
	}
}

// execute runs one install and records its outcome.
func (i *Installer) execute(ctx context.Context, r *installRun) {
	i.publish(i.Status())
	err := i.install(ctx, r.manifest)
	if errors.Is(err, context.Canceled) {
		err = errors.New("install cancelled; the downloaded part is kept and the next install resumes it")
	}
	st := i.probe(context.WithoutCancel(ctx))
	if err != nil {
		st.Error = err.Error()
		st.Progress = i.Status().Progress
		i.cfg.Logger.Warn("sandbox install failed", "err", err)
	}
	i.mu.Lock()
	i.status = st
	r.status, r.err = st, err
	i.run = nil
	i.mu.Unlock()
	r.cancel()
	i.publish(st)
	close(r.done)
}

// install does the work of one run.
func (i *Installer) install(ctx context.Context, manifestURL string) error {
	sup := i.cfg.Detect(ctx)
	i.update(func(st *Status) { st.Supported, st.Support = sup.Supported, sup })
	if !sup.Supported {
		return errors.New(sup.Reason)
	}
	mu, err := ManifestURL(manifestURL)
	if err != nil {
		return err
	}
	m, err := FetchManifest(ctx, i.cfg.HTTPClient, mu)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(i.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", i.cfg.Dir, err)
	}
	unlock, err := lockDir(i.cfg.Dir)
	if err != nil {
		return err
	}
	defer unlock()
	inst, err := LoadInstalled(i.cfg.Dir)
	if err != nil {
		return err
	}

	runtimeArts := m.forArch(sup.Arch, KindRuntime)
	if sup.SystemQEMU != "" {
		runtimeArts = nil // the system QEMU is used
		i.update(func(st *Status) { st.RuntimeReady, st.Runtime = true, sup.SystemQEMU })
	} else if len(runtimeArts) == 0 {
		return fmt.Errorf("no %s found on this system and the manifest %s has no runtime for %s: install QEMU (apt install qemu-system-x86 / brew install qemu) or use a manifest with a runtime artifact",
			sup.QEMUBinary, mu, sup.Arch)
	}
	if err := i.stage(ctx, StageRuntime, runtimeArts, &inst, m.Version); err != nil {
		return err
	}
	if len(runtimeArts) > 0 {
		i.update(func(st *Status) { st.RuntimeReady, st.Runtime = true, inst.Path(i.cfg.Dir, KindRuntime) })
	}

	imageArts := m.forArch(sup.Arch, KindKernel, KindInitrd, KindRootfs)
	if len(m.forArch(sup.Arch, KindKernel)) == 0 || len(m.forArch(sup.Arch, KindRootfs)) == 0 {
		return fmt.Errorf("manifest %s has no kernel and rootfs for %s", mu, sup.Arch)
	}
	if err := i.stage(ctx, StageImage, imageArts, &inst, m.Version); err != nil {
		return err
	}
	i.update(func(st *Status) {
		st.ImageReady = true
		st.Progress = Progress{Stage: StageReady, Percent: 100}
	})
	return nil
}

// stage downloads arts one after the other, publishing progress for the stage as a whole.
func (i *Installer) stage(ctx context.Context, stage string, arts []Artifact, inst *Installed, version string) error {
	kinds := map[string]bool{}
	var total int64
	for _, a := range arts {
		if kinds[a.Kind] {
			return fmt.Errorf("manifest lists two %s artifacts for this architecture; keep one", a.Kind)
		}
		kinds[a.Kind] = true
		total += a.Size
	}
	var done int64
	lastPct := -1
	report := func(name string, received int64, force bool) {
		p := percent(done+received, total)
		if p == lastPct && !force {
			return
		}
		lastPct = p
		i.update(func(st *Status) {
			st.Progress = Progress{Stage: stage, Artifact: name, Received: done + received, Total: total, Percent: p}
		})
	}
	report("", 0, true)
	for _, a := range arts {
		dest := artifactPath(i.cfg.Dir, a)
		if prev, ok := inst.Artifacts[a.Kind]; ok && prev.Name == a.Name && prev.SHA256 == a.SHA256 && prev.Size == a.Size && inst.present(i.cfg.Dir, a.Kind) {
			done += a.Size
			report(a.Name, 0, true)
			continue
		}
		f := &fetcher{client: i.cfg.HTTPClient, retryGap: i.cfg.RetryGap,
			progress: func(n int64) { report(a.Name, n, false) }}
		if err := f.fetch(ctx, a, dest); err != nil {
			return fmt.Errorf("%s stage: %w", stage, err)
		}
		if old, ok := inst.Artifacts[a.Kind]; ok && old.Name != a.Name {
			os.Remove(artifactPath(i.cfg.Dir, old))
		}
		inst.Artifacts[a.Kind] = a
		inst.ManifestVersion = version
		if err := inst.save(i.cfg.Dir); err != nil {
			return err
		}
		done += a.Size
		report(a.Name, 0, true)
	}
	return nil
}

// update changes the status under the lock and publishes the result.
func (i *Installer) update(f func(*Status)) {
	i.mu.Lock()
	f(&i.status)
	st := i.status
	i.mu.Unlock()
	i.publish(st)
}

func (i *Installer) publish(st Status) {
	if i.cfg.Publisher != nil {
		i.cfg.Publisher.Publish(st)
	}
}
