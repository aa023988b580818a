// Typed access to the micro-VM installer through the façade (app/desktop/vminstall.go)
// and its live events ("sandbox.install").
import * as Facade from '../../wailsjs/go/desktop/Facade';
import { events, Topics } from './events';
import type { VMStatus } from './vminstall';

export const vmApi = {
  /** The installer's status (supported, runtime/image ready, downloading with progress, error). */
  status: async (): Promise<VMStatus> => (await Facade.VMStatus()) as unknown as VMStatus,
  /** Starts the install in the background (or joins the running one); rejects when it cannot start. */
  install: (): Promise<void> => Facade.VMInstall(),
  /** Stops the install; the next one resumes the download. */
  cancel: (): Promise<void> => Facade.VMInstallCancel(),
  /** onStatus calls back with every status the installer publishes, until the returned function is called. */
  onStatus: (callback: (st: VMStatus) => void): (() => void) =>
    // The event says where the install stands; the full status is re-read for each.
    events.on(Topics.SandboxInstall, () => {
      Facade.VMStatus().then(
        (st) => callback(st as unknown as VMStatus),
        () => {},
      );
    }),
};
