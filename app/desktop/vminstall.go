package desktop

import (
	"context"

	"github.com/airlock-app/airlock/api"
)

// VMStatus is the micro-VM installer's status for the Sandbox tab: supported, runtime and
// image ready, downloading with its progress, and the last error in plain words. The
// window follows it live on the "sandbox.install" events.
func (f *Facade) VMStatus() api.VMStatus {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return f.core.VMStatus(ctx)
}

// VMInstall starts installing the micro-VM runtime and image in the background (or joins
// the install already running) from the configured manifest ($AIRLOCK_SANDBOX_MANIFEST)
// and returns the status; progress arrives as "sandbox.install" events. It fails at once
// only when no manifest is configured or the machine cannot run the micro-VM.
func (f *Facade) VMInstall() (api.VMStatus, error) {
	return f.core.VMInstall(context.Background(), api.VMInstallIn{})
}

// VMInstallCancel stops the running install and returns the status; the downloaded part
// is kept and the next install resumes it.
func (f *Facade) VMInstallCancel() api.VMStatus { return f.core.VMInstallCancel() }
