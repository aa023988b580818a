package desktop

import (
	"context"
	"errors"

	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// VMStatus is the micro-VM installer's status for the Sandbox tab: supported, runtime and
// image ready, downloading with its progress, and the last error in plain words. The
// window follows it live on the "sandbox.install" events.
func (f *Facade) VMStatus() vminstall.Status {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return f.core.VMStatus(ctx)
}

// VMInstall starts installing the micro-VM runtime and image in the background (or joins
// the install already running) from the configured manifest ($AIRLOCK_SANDBOX_MANIFEST);
// progress arrives as "sandbox.install" events. It fails at once only when no manifest
// is configured or the machine cannot run the micro-VM.
func (f *Facade) VMInstall() error {
	st := f.core.VMStatus(context.Background())
	if !st.Supported && st.Support.Reason != "" {
		return errors.New(st.Support.Reason)
	}
	if f.core.VMManifest() == "" {
		return errors.New("no image source is configured: start Airlock with AIRLOCK_SANDBOX_MANIFEST=URL (a manifest built by `make sandbox-image`), or run `airlock sandbox install --manifest URL`")
	}
	f.core.VMInstall("")
	return nil
}

// VMInstallCancel stops the running install; the downloaded part is kept and the next
// install resumes it.
func (f *Facade) VMInstallCancel() { f.core.VMInstallCancel() }
