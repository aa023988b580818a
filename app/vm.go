package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// EnvSandboxManifest names the manifest the micro-VM installer uses when a request gives none.
const EnvSandboxManifest = "AIRLOCK_SANDBOX_MANIFEST"

// vmIdle is how long a warm micro-VM waits for the next command before it shuts down.
const vmIdle = 5 * time.Minute

// microVM is the core's micro-VM: one installer (status published on the bus as
// "sandbox.install") and one pool of warm VMs, rebuilt when the installed image changes.
type microVM struct {
	inst     *vminstall.Installer
	dir      string
	probed   chan struct{} // closed after the first Refresh
	probeOne sync.Once

	mu      sync.Mutex
	pool    *vm.Pool
	poolCfg vm.Config
	closed  bool
}

// openVM creates the installer; nothing is probed until startVM.
func (c *Core) openVM() {
	c.vm = &microVM{
		inst: vminstall.New(vminstall.Config{Dir: c.Paths.SandboxDir, ManifestURL: c.getenv(EnvSandboxManifest), Publisher: vmPublisher{c}}),
		dir:  c.Paths.SandboxDir, probed: make(chan struct{}),
	}
}

// vmPublisher puts the installer's status on the bus and, once the micro-VM is ready,
// tells dispatch: auto runs waiting on the question whether they may run on the host are
// routed again, and go to the micro-VM without a restart.
type vmPublisher struct{ c *Core }

func (p vmPublisher) Publish(st api.VMStatus) {
	p.c.Bus.Publish(vminstall.Topic, withKVMFallback(st))
	if st.Ready() && !st.Downloading && p.c.Dispatch != nil {
		p.c.Dispatch.RerouteWaiting()
	}
}

// startVM probes QEMU, KVM and the installed files in the background and publishes the status.
func (c *Core) startVM(ctx context.Context) {
	go func() {
		defer c.vm.probeOne.Do(func() { close(c.vm.probed) })
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		st := c.vm.inst.Refresh(pctx)
		slog.Info("micro-VM", "ready", st.Ready(), "runtime", st.Runtime, "image", st.Version, "accel", st.Support.Accel, "error", st.Error)
	}()
}

// closeVM shuts the warm VMs down and stops a running install (its .part files stay).
func (c *Core) closeVM() {
	if c.vm == nil {
		return
	}
	c.vm.inst.Cancel()
	c.vm.mu.Lock()
	c.vm.closed = true
	p := c.vm.pool
	c.vm.pool = nil
	c.vm.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

// VMStatus is the installer's status, after the start-up probe (or ctx) ended (GET
// /v1/sandbox/vm and the window's Sandbox tab).
func (c *Core) VMStatus(ctx context.Context) api.VMStatus {
	select {
	case <-c.vm.probed:
	case <-ctx.Done():
	}
	return withKVMFallback(c.vm.inst.Status())
}

// withKVMFallback corrects the installer's "kvm" when this core's VMs had to boot under
// TCG (nested virtualization: /dev/kvm opens but guests do not boot under it).
func withKVMFallback(st vminstall.Status) vminstall.Status {
	if why := vm.KVMFallback(); why != "" && st.Support.Accel == "kvm" {
		st.Support.Accel = "tcg"
		st.Support.Warning = why + ": the micro-VM runs under TCG emulation, several times slower"
	}
	return st
}

// VMInstall starts installing the runtime and image in the background from in.Manifest
// ("": $AIRLOCK_SANDBOX_MANIFEST), or joins the install already running, and returns the
// status at once (POST /v1/sandbox/vm/install and the window's Install button). Progress
// is published as "sandbox.install" events. It refuses at once, with an *api.Error, when
// the machine cannot run the micro-VM or no manifest is given or configured, so that no
// install is started only to fail.
func (c *Core) VMInstall(ctx context.Context, in api.VMInstallIn) (api.VMStatus, error) {
	st := c.VMStatus(ctx)
	if !st.Supported && st.Support.Reason != "" {
		return st, api.Errorf(http.StatusNotImplemented, api.CodeUnsupported, st.Support.Reason, "")
	}
	if in.Manifest == "" && c.VMManifest() == "" {
		return st, api.Errorf(http.StatusBadRequest, api.CodeInvalid,
			"no image source is configured: start Airlock with AIRLOCK_SANDBOX_MANIFEST=URL (a manifest built by `make sandbox-image`), or run `airlock sandbox install --manifest URL`", "")
	}
	return c.vm.inst.Start(in.Manifest), nil
}

// VMManifest is the manifest an install without one uses ($AIRLOCK_SANDBOX_MANIFEST).
func (c *Core) VMManifest() string { return c.getenv(EnvSandboxManifest) }

// VMInstallWait waits for the running install, if any, to end.
func (c *Core) VMInstallWait(ctx context.Context) (vminstall.Status, error) {
	return c.vm.inst.Wait(ctx)
}

// VMInstallCancel stops the running install and returns the status; the next install
// resumes the download (POST /v1/sandbox/vm/cancel and the window's Cancel button).
func (c *Core) VMInstallCancel() api.VMStatus {
	c.vm.inst.Cancel()
	return withKVMFallback(c.vm.inst.Status())
}

// MicroVM returns the runner of one dispatch run: the run's own VM (a session of the
// warm pool, booted on its first command) and the function that shuts it down when the run
// ends, so that what it wrote outside its workspace is gone. The error wraps
// vm.ErrNotReady and says what to install when the runtime or image is missing.
func (c *Core) MicroVM(runID uint) (sandbox.MicroVM, func(), error) {
	p, err := c.VMPool()
	if err != nil {
		return nil, nil, err
	}
	s := p.Session(fmt.Sprintf("run-%d", runID))
	return s.SandboxExec, s.End, nil
}

// VMPool returns the core's pool of micro-VMs, built from what is installed (rebuilt when
// the installed image changes), or an error wrapping vm.ErrNotReady.
func (c *Core) VMPool() (*vm.Pool, error) {
	select {
	case <-c.vm.probed:
	case <-time.After(15 * time.Second):
	}
	base, err := vm.ConfigFromInstall(c.vm.dir, c.vm.inst.Status())
	if err != nil {
		return nil, err
	}
	c.vm.mu.Lock()
	defer c.vm.mu.Unlock()
	if c.vm.closed {
		return nil, errors.New("the Airlock core is stopping")
	}
	if c.vm.pool == nil || c.vm.poolCfg != base {
		if old := c.vm.pool; old != nil {
			go old.Close() // an updated image: the next commands boot the new one
		}
		c.vm.pool, c.vm.poolCfg = vm.NewPool(base, vmIdle, nil, slog.Default()), base
	}
	return c.vm.pool, nil
}

// auditRoute writes an execution-mode decision into the permission audit (tool exec,
// layer isolation): where the run's command ran and why.
func (c *Core) auditRoute(rt sandboxexec.Route) {
	verdict := permission.Allow
	if rt.Where == "" {
		verdict = permission.Deny
	}
	subject := "execution_mode " + rt.Mode + ": " + rt.Command
	if rt.Where != "" {
		subject += " → " + rt.Where
	}
	reasons, _ := json.Marshal([]string{rt.Reason})
	// The row is redacted as it is written (permission.AuditRecord.BeforeSave).
	rec := permission.AuditRecord{AuditRecord: api.AuditRecord{
		RequestID: fmt.Sprintf("run-%d-route", rt.RunID), Tool: permission.ToolExec, Subject: subject,
		Verdict: verdict, Layer: permission.LayerIsolation, Reasons: string(reasons),
		Run: fmt.Sprint(rt.RunID), Cwd: rt.Cwd, AskedBy: "dispatch", AnsweredBy: "execution_mode " + rt.Mode, CreatedAt: time.Now().UTC(),
	}}
	if rt.Asked {
		rec.Kind, rec.AnsweredBy = permission.KindIsolationEscalation, rt.AnsweredBy
	}
	if err := c.DB.Create(&rec).Error; err != nil {
		slog.Error("audit the execution-mode decision", "run", rt.RunID, "err", err)
	}
}

// vmRoutes are the micro-VM's local API routes.
func (c *Core) vmRoutes() {
	handle(c, api.GetVMStatus, func(r *http.Request, _ api.None) (api.VMStatus, error) {
		return c.VMStatus(r.Context()), nil
	})
	handle(c, api.InstallVM, func(r *http.Request, in api.VMInstallIn) (api.VMStatus, error) {
		return c.VMInstall(r.Context(), in)
	})
	handle(c, api.CancelVMInstall, func(*http.Request, api.None) (api.VMStatus, error) {
		return c.VMInstallCancel(), nil
	})
}
