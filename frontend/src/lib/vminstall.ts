// The Sandbox tab's micro-VM install section, as pure logic: what to say about the
// installer's status (api.VMStatus, live on the "sandbox.install" events), the
// speed computed from successive progress events, and errors in plain words.

import type { VMProgress, VMStatus } from './wire.gen';

export type { VMProgress, VMStatus };

export type VMState = 'checking' | 'unsupported' | 'not-installed' | 'installing' | 'ready' | 'failed';

/** What the section shows for a status. */
export interface VMView {
  state: VMState;
  headline: string;
  detail?: string;
  canInstall: boolean;
  canCancel: boolean;
  canRetry: boolean;
  /** The sandbox and auto execution modes stay disabled until this is true. */
  modesEnabled: boolean;
}

const stageNames: Record<string, string> = {
  detect: 'Checking this machine',
  runtime: 'Downloading the runtime (QEMU)',
  image: 'Downloading the image',
  ready: 'Ready',
};

/** stageLabel names a stage in words. */
export function stageLabel(stage: string): string {
  return stageNames[stage] ?? stage;
}

/** vmView says what the install section shows. */
export function vmView(st: VMStatus | undefined): VMView {
  const none = { canInstall: false, canCancel: false, canRetry: false, modesEnabled: false };
  if (!st) return { ...none, state: 'checking', headline: 'Checking whether this machine can run the micro-VM…' };
  if (st.downloading) {
    return { ...none, state: 'installing', headline: stageLabel(st.progress?.stage ?? 'detect'), detail: st.progress?.artifact, canCancel: true };
  }
  if (!st.supported) {
    return { ...none, state: 'unsupported', headline: 'This machine cannot run the micro-VM', detail: plainError(st.support?.reason || st.error || '') };
  }
  if (st.runtime_ready && st.image_ready) {
    const accel = st.support?.accel === 'kvm' ? 'with KVM' : st.support?.accel === 'tcg' ? 'without KVM (emulated, slower)' : '';
    return {
      ...none,
      state: 'ready',
      headline: 'The micro-VM is installed',
      detail: [st.version && `image ${st.version}`, accel].filter(Boolean).join(', ') || undefined,
      modesEnabled: true,
    };
  }
  if (st.error) return { ...none, state: 'failed', headline: 'The install did not finish', detail: plainError(st.error), canRetry: true };
  return {
    ...none,
    state: 'not-installed',
    headline: 'The micro-VM is not installed',
    detail: 'Install it to run commands in a throwaway virtual machine (execution modes "sandbox" and "auto").',
    canInstall: true,
  };
}

/** plainError turns an installer error into words a person can act on. */
export function plainError(err: string): string {
  const e = err.trim();
  const l = e.toLowerCase();
  if (e === '') return '';
  if (l.includes('cancelled')) return 'The install was cancelled. Retry resumes the download where it stopped.';
  if (l.includes('sha256') || l.includes('checksum')) return 'A downloaded file was damaged (its checksum did not match) and was thrown away. Retry downloads it again.';
  if (l.includes('connection refused') || l.includes('no such host') || l.includes('timeout') || l.includes('i/o timeout'))
    return `The image server could not be reached. Check the network or the manifest address, then Retry. (${e})`;
  if (l.includes('no space left')) return 'The disk is full. Free some space, then Retry.';
  if (l.includes('no manifest') || l.includes('no image source')) return e;
  return e.charAt(0).toUpperCase() + e.slice(1);
}

/** formatBytes prints a byte count in B, KB, MB or GB (powers of 1000, like the CLI). */
export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} KB`;
  return `${Math.max(0, Math.round(n))} B`;
}

/**
 * SpeedMeter computes the download speed from successive progress events: bytes
 * received over the last few seconds of events. A new stage or bytes going backwards
 * (a restarted file) start over.
 */
export class SpeedMeter {
  private samples: { t: number; received: number }[] = [];
  private stage = '';

  constructor(private readonly windowMs = 3000) {}

  /** add records an event seen at time t (ms) and returns the speed in bytes/s (0 until known). */
  add(p: VMProgress, t: number): number {
    const last = this.samples.at(-1);
    if (p.stage !== this.stage || (last && p.received < last.received)) {
      this.samples = [];
      this.stage = p.stage;
    }
    this.samples.push({ t, received: p.received });
    while (this.samples.length > 2 && t - (this.samples[0]?.t ?? t) > this.windowMs) this.samples.shift();
    return this.speed();
  }

  /** speed is the current estimate in bytes/s. */
  speed(): number {
    const a = this.samples[0];
    const b = this.samples.at(-1);
    if (!a || !b || a === b) return 0;
    const dt = (b.t - a.t) / 1000;
    return dt > 0 ? Math.max(0, (b.received - a.received) / dt) : 0;
  }

  reset(): void {
    this.samples = [];
    this.stage = '';
  }
}

/** progressLine is "120.4 MB of 296.0 MB · 41% · 85.2 MB/s · about 2 s left". */
export function progressLine(p: VMProgress, speed: number): string {
  const parts: string[] = [];
  if (p.total > 0) parts.push(`${formatBytes(p.received)} of ${formatBytes(p.total)}`, `${p.percent}%`);
  if (speed > 0) {
    parts.push(`${formatBytes(speed)}/s`);
    if (p.total > p.received) {
      const left = Math.ceil((p.total - p.received) / speed);
      parts.push(left < 60 ? `about ${left} s left` : `about ${Math.ceil(left / 60)} min left`);
    }
  }
  return parts.join(' · ');
}
