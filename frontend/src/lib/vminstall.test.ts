import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { SpeedMeter, formatBytes, plainError, progressLine, stageLabel, vmView, type VMStatus } from './vminstall';
import type { VMSupport } from './wire.gen';
import VMInstall from '../components/VMInstall.svelte';

const host: VMSupport = { os: 'linux', arch: 'amd64', supported: true, kvm: false, accel: 'tcg', warning: 'no usable /dev/kvm: slower', qemu_binary: 'qemu-system-x86_64' };
const base: VMStatus = {
  supported: true,
  runtime_ready: false,
  image_ready: false,
  downloading: false,
  progress: { stage: '', received: 0, total: 0, percent: 0 },
  support: host,
};
const st = (over: Partial<VMStatus> = {}): VMStatus => ({ ...base, ...over });

describe('vmView', () => {
  it.each<[string, VMStatus | undefined, string, Partial<ReturnType<typeof vmView>>]>([
    ['checking', undefined, 'checking', { canInstall: false, modesEnabled: false }],
    ['not installed', st(), 'not-installed', { canInstall: true, canRetry: false, modesEnabled: false }],
    ['downloading', st({ downloading: true, progress: { stage: 'image', artifact: 'rootfs.qcow2', received: 5, total: 10, percent: 50 } }), 'installing', { canCancel: true, canInstall: false }],
    ['failed', st({ error: 'install cancelled; the downloaded part is kept and the next install resumes it' }), 'failed', { canRetry: true, canInstall: false }],
    ['ready', st({ runtime_ready: true, image_ready: true, version: 'bookworm-1' }), 'ready', { modesEnabled: true, canInstall: false }],
    ['unsupported', st({ supported: false, support: { ...host, supported: false, reason: 'the micro-VM needs an amd64 or arm64 host' } }), 'unsupported', { canInstall: false }],
  ])('%s', (_, status, state, flags) => {
    const v = vmView(status);
    expect(v.state).toBe(state);
    expect(v).toMatchObject(flags);
  });

  it('names the stage and the file being downloaded', () => {
    const v = vmView(st({ downloading: true, progress: { stage: 'image', artifact: 'rootfs.qcow2', received: 1, total: 2, percent: 50 } }));
    expect(v.headline).toBe('Downloading the image');
    expect(v.detail).toBe('rootfs.qcow2');
    expect(stageLabel('runtime')).toContain('QEMU');
  });

  it('says a ready VM without KVM is emulated', () => {
    expect(vmView(st({ runtime_ready: true, image_ready: true, version: 'v1' })).detail).toBe('image v1, without KVM (emulated, slower)');
  });
});

describe('plainError', () => {
  it.each([
    ['install cancelled; the downloaded part is kept', 'Retry resumes'],
    ['rootfs.qcow2: sha256 mismatch: got ab, want cd', 'damaged'],
    ['manifest: Get "http://127.0.0.1:1/m.json": dial tcp 127.0.0.1:1: connect: connection refused', 'could not be reached'],
    ['write /x/rootfs.qcow2.part: no space left on device', 'disk is full'],
    ['something odd', 'Something odd'],
  ])('%s → %s', (err, words) => {
    expect(plainError(err)).toContain(words);
  });
});

describe('SpeedMeter', () => {
  it('computes bytes per second from successive events', () => {
    const m = new SpeedMeter();
    const p = (received: number) => ({ stage: 'image', received, total: 100e6, percent: 0 });
    expect(m.add(p(0), 0)).toBe(0);
    expect(m.add(p(10e6), 1000)).toBe(10e6);
    expect(m.add(p(30e6), 2000)).toBe(15e6);
  });

  it('starts over on a new stage or when bytes go back', () => {
    const m = new SpeedMeter();
    m.add({ stage: 'runtime', received: 0, total: 10, percent: 0 }, 0);
    m.add({ stage: 'runtime', received: 10, total: 10, percent: 100 }, 1000);
    expect(m.add({ stage: 'image', received: 5, total: 10, percent: 50 }, 1500)).toBe(0);
    m.add({ stage: 'image', received: 8, total: 10, percent: 80 }, 2500);
    expect(m.add({ stage: 'image', received: 1, total: 10, percent: 10 }, 3000)).toBe(0);
  });

  it('keeps only the last few seconds', () => {
    const m = new SpeedMeter(2000);
    m.add({ stage: 'image', received: 0, total: 1e9, percent: 0 }, 0);
    m.add({ stage: 'image', received: 100e6, total: 1e9, percent: 10 }, 1000); // fast start
    m.add({ stage: 'image', received: 101e6, total: 1e9, percent: 10 }, 4000);
    expect(m.add({ stage: 'image', received: 102e6, total: 1e9, percent: 10 }, 5000)).toBe(1e6);
  });
});

describe('progressLine', () => {
  it('shows bytes, percent, speed and time left', () => {
    expect(progressLine({ stage: 'image', received: 120.4e6, total: 296e6, percent: 40 }, 85.2e6)).toBe('120.4 MB of 296.0 MB · 40% · 85.2 MB/s · about 3 s left');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(2.5e9)).toBe('2.50 GB');
  });
});

describe('VMInstall.svelte', () => {
  let mounted: Record<string, unknown>[] = [];
  afterEach(() => {
    for (const m of mounted) unmount(m);
    mounted = [];
    document.body.innerHTML = '';
  });

  function fakeApi(initial: VMStatus) {
    let listener: ((s: VMStatus) => void) | undefined;
    const calls: string[] = [];
    let current = initial;
    return {
      calls,
      push: (s: VMStatus) => {
        current = s;
        listener?.(s);
      },
      api: {
        status: async () => current,
        install: async () => {
          calls.push('install');
          current = st({ downloading: true, progress: { stage: 'detect', received: 0, total: 0, percent: 0 } });
        },
        cancel: async () => {
          calls.push('cancel');
        },
        onStatus: (cb: (s: VMStatus) => void) => {
          listener = cb;
          return () => (listener = undefined);
        },
      },
    };
  }

  async function settle() {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    flushSync();
  }

  it('installs with live progress, speed, cancel, and a retry in plain words', async () => {
    const f = fakeApi(st());
    let t = 0;
    const target = document.createElement('div');
    document.body.appendChild(target);
    mounted.push(mount(VMInstall as any, { target, props: { api: f.api, now: () => t } }));
    await settle();
    const section = target.querySelector('[data-testid=vm-install]')!;
    expect(section.getAttribute('data-state')).toBe('not-installed');
    expect(target.textContent).toContain('stay off until the micro-VM is installed');

    (Array.from(target.querySelectorAll('button')).find((b) => b.textContent === 'Install') as HTMLButtonElement).click();
    await settle();
    expect(f.calls).toEqual(['install']);
    expect(section.getAttribute('data-state')).toBe('installing');

    const ev = (received: number) => st({ downloading: true, progress: { stage: 'image', artifact: 'rootfs.qcow2', received, total: 300e6, percent: Math.floor((received * 100) / 300e6) } });
    t = 0;
    f.push(ev(0));
    t = 1000;
    f.push(ev(50e6));
    flushSync();
    expect(target.querySelector('[data-testid=vm-progress]')!.textContent).toBe('50.0 MB of 300.0 MB · 16% · 50.0 MB/s · about 5 s left');
    expect(target.textContent).toContain('Downloading the image');
    expect(target.querySelector('[role=progressbar]')!.getAttribute('aria-valuenow')).toBe('16');

    (Array.from(target.querySelectorAll('button')).find((b) => b.textContent === 'Cancel') as HTMLButtonElement).click();
    await settle();
    expect(f.calls).toEqual(['install', 'cancel']);
    f.push(st({ error: 'install cancelled; the downloaded part is kept and the next install resumes it', progress: ev(50e6).progress }));
    flushSync();
    expect(section.getAttribute('data-state')).toBe('failed');
    expect(target.querySelector('[data-testid=vm-detail]')!.textContent).toContain('Retry resumes the download');
    expect(Array.from(target.querySelectorAll('button')).map((b) => b.textContent)).toEqual(['Retry']);

    f.push(st({ runtime_ready: true, image_ready: true, version: 'bookworm-x', progress: { stage: 'ready', received: 0, total: 0, percent: 100 } }));
    flushSync();
    expect(section.getAttribute('data-state')).toBe('ready');
    expect(target.textContent).toContain('vanish when it stops');
    expect(target.querySelectorAll('button').length).toBe(0);
  });

  it('shows why the install could not start', async () => {
    const f = fakeApi(st());
    f.api.install = async () => {
      throw 'no image source is configured: start Airlock with AIRLOCK_SANDBOX_MANIFEST=URL';
    };
    const target = document.createElement('div');
    document.body.appendChild(target);
    mounted.push(mount(VMInstall as any, { target, props: { api: f.api } }));
    await settle();
    (target.querySelector('button') as HTMLButtonElement).click();
    await settle();
    expect(target.querySelector('[data-testid=vm-error]')!.textContent).toContain('AIRLOCK_SANDBOX_MANIFEST');
  });
});
