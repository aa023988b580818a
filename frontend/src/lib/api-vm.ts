// Typed access to the micro-VM installer through the façade (app/desktop/vminstall.go)
// and its live events ("sandbox.install").
import * as Facade from '../../wailsjs/go/desktop/Facade';
import { events, Topics } from './events';
import type { VMStatus } from './vminstall';

export const vmApi = {
  /** The installer's status (supported, runtime/image ready, downloading with progress, error). */
  status: async (): Promise<VMStatus> => (await Facade.VMStatus()) as unknown as VMStatus,
  /** Starts the install in the background (or joins the running one); rejects when it cannot start. */
  install: async (): Promise<void> => {
    await Facade.VMInstall();
  },
  /** Stops the install; the next one resumes the download. */
  cancel: async (): Promise<void> => {
    await Facade.VMInstallCancel();
  },
  /** onStatus calls back with every status the installer publishes, until the returned function is called. */
  onStatus: (callback: (st: VMStatus) => void): (() => void) => events.on(Topics.SandboxInstall, (st) => callback(st)),
};
