import { afterEach, describe, expect, it, vi } from 'vitest';
import { render, unmountAll } from '../test/render';
import TierBadge from './TierBadge.svelte';
import ModeBadge from './ModeBadge.svelte';
import Sidebar from './Sidebar.svelte';
import PathText from './PathText.svelte';
import Settings from '../pages/Settings.svelte';
import SandboxProbes from './SandboxProbes.svelte';
import SandboxBanner from './SandboxBanner.svelte';
import Waiting from '../pages/Waiting.svelte';
import { footerFacts } from '../lib/footer';
import type { ConfigView, SandboxStatus } from '../lib/api';

afterEach(() => {
  unmountAll();
});

describe('TierBadge', () => {
  it.each([
    ['P0', 'silent'],
    ['P1', 'asks once'],
    ['P2', 'asks every time'],
  ])('%s says %s and has its style', (tier, words) => {
    const el = render(TierBadge, { tier, words: true });
    const badge = el.querySelector('.tier')!;
    expect(badge.textContent).toContain(tier);
    expect(badge.textContent).toContain(words);
    expect(badge.classList.contains(`tier-${tier.toLowerCase()}`)).toBe(true);
  });
});

describe('ModeBadge', () => {
  it('shows full-access with the red outline style and network on', () => {
    const el = render(ModeBadge, { mode: 'full-access', network: true });
    expect(el.querySelector('.mode')!.classList.contains('mode-full')).toBe(true);
    expect(el.textContent).toContain('network on');
  });
  it('says an allowlist has no network until its proxy is connected', () => {
    const el = render(ModeBadge, { mode: 'workspace-write', network: 'allowlist' });
    expect(el.querySelector('[data-network="allowlist"]')!.textContent).toContain('allowlist');
    expect(el.textContent).not.toContain('network on');
    expect(render(ModeBadge, { mode: 'workspace-write', network: 'on' }).textContent).toContain('network on');
    expect(render(ModeBadge, { mode: 'workspace-write', network: 'off' }).textContent).not.toContain('network');
  });
  it('shows no globe when network is off', () => {
    const el = render(ModeBadge, { mode: 'read-only' });
    expect(el.querySelector('.mode')!.classList.contains('mode-ro')).toBe(true);
    expect(el.textContent).not.toContain('network');
  });
});

describe('PathText', () => {
  it('shows ~ and keeps the full path on hover', () => {
    const el = render(PathText, { path: '/home/ana/Airlock/notes.md', home: '/home/ana' });
    const span = el.querySelector('.path')!;
    expect(span.textContent).toBe('~/Airlock/notes.md');
    expect(span.getAttribute('title')).toBe('/home/ana/Airlock/notes.md');
  });
});

describe('Sidebar', () => {
  it('lists the five pages, marks the current one and shows the waiting count', () => {
    const el = render(Sidebar, { current: 'settings', waiting: 3, facts: [] });
    const links = [...el.querySelectorAll('a')].map((a) => a.textContent!.replace(/\s+/g, ' ').trim());
    expect(links).toEqual(['Waiting for you 3', 'Dispatch', 'Departments', 'Ops', 'Settings']);
    expect(el.querySelector('a[aria-current="page"]')!.getAttribute('data-page')).toBe('settings');
  });

  it('says only what the core reports in the footer', () => {
    const el = render(Sidebar, { current: 'waiting', waiting: 0, facts: footerFacts(undefined) });
    expect(el.querySelector('footer')!.textContent).toContain('connecting');
  });
});

describe('Waiting', () => {
  it('shows its true empty state with the workspace roots', () => {
    const el = render(Waiting, { approvals: [], roots: ['/home/ana/Airlock'], home: '/home/ana' });
    expect(el.textContent).toContain('Nothing is waiting for you');
    expect(el.textContent).toContain('~/Airlock');
    expect(el.textContent).toContain('0 items');
  });

  it('shows a change of config.toml that waits, confirmable in place', () => {
    const onconfirmconfig = vi.fn(async () => {});
    const configPending = { keys: ['approval_policy'], digest: 'abc', since: '2026-11-29T10:00:00Z', message: 'config.toml loosens approval_policy: … `airlock config confirm` …' };
    const el = render(Waiting, { approvals: [], roots: [], home: '/home/ana', configPending, onconfirmconfig });
    expect(el.textContent).not.toContain('Nothing is waiting for you');
    expect(el.textContent).toContain('1 item');
    expect(el.querySelector('[data-testid="waiting-config"]')!.textContent).toContain('airlock config confirm');
    (el.querySelector('[data-testid="waiting-config-confirm"]') as HTMLButtonElement).click();
    expect(onconfirmconfig).toHaveBeenCalledWith('abc');
  });

  it('lists pending requests most urgent first, answerable in place', () => {
    const approvals = [
      { id: 'a1', tool: 'write_file', summary: 'write notes.md', tier: 'P1', interactive_only: false, reasons: [], scopes: ['once', 'session', 'always'], params: '', created_at: '2026-11-29T10:00:00Z', network: false, cwd: '/home/ana/Airlock/research', mode: 'workspace-write', session: 'refactor' },
      { id: 'b2', tool: 'bash', summary: 'git push --force origin main', tier: 'P2', kind: 'bash_destructive', interactive_only: true, reasons: ['data loss: rewrites the remote branch history'], scopes: ['once'], params: '', created_at: '2026-11-29T11:00:00Z', network: true },
    ];
    const el = render(Waiting, { approvals, roots: [], home: '/home/ana' });
    const rows = [...el.querySelectorAll('[data-approval]')];
    expect(rows.map((r) => r.getAttribute('data-approval'))).toEqual(['b2', 'a1']);
    expect(rows[0]!.textContent).toContain('data loss: rewrites the remote branch history');
    expect(rows[0]!.textContent).toContain('Only a person can allow this one');
    expect([...rows[0]!.querySelectorAll('button')].map((b) => b.textContent!.trim())).toEqual(['Deny', 'Review and allow…']);
    expect([...rows[1]!.querySelectorAll('button')].map((b) => b.textContent!.trim())).toEqual(['Deny', 'Allow once', 'Allow for this session', 'Allow always ▾']);
    expect(rows[1]!.textContent).toContain('~/Airlock/research');
    expect(rows[1]!.textContent).toContain('agent session “refactor”');
    expect(el.textContent).toContain('2 items');
    expect(el.textContent).not.toContain('Nothing is waiting');
  });
});

const baseConfig = (over: Partial<ConfigView> = {}): ConfigView =>
  ({
    path: '/home/ana/.config/airlock/config.toml',
    exists: true,
    loaded_at: '2026-11-29T12:00:00Z',
    settings: [
      { key: 'sandbox_mode', value: 'read-only', layer: 'file', detail: '/home/ana/.config/airlock/config.toml' },
      { key: 'approval_policy', value: 'never', layer: 'env', detail: 'AIRLOCK_APPROVAL_POLICY' },
    ],
    ...over,
  }) as ConfigView;

describe('Settings', () => {
  it('shows each effective value with the layer that set it', () => {
    const el = render(Settings, { config: baseConfig(), status: undefined, home: '/home/ana' });
    const mode = el.querySelector('[data-key="sandbox_mode"]')!;
    expect(mode.querySelector('[data-mode]')!.textContent).toBe('read-only');
    expect(mode.querySelector('[data-layer]')!.getAttribute('data-layer')).toBe('file');
    const policy = el.querySelector('[data-key="approval_policy"]')!;
    expect(policy.textContent).toContain('env AIRLOCK_APPROVAL_POLICY');
    expect(policy.textContent).toContain('wins over config.toml');
  });

  it('shows a broken config.toml with the line and column of each mistake', () => {
    const config = baseConfig({
      error: {
        path: '/home/ana/.config/airlock/config.toml',
        problems: [{ line: 3, column: 16, key: 'sandbox_mode', message: '"read-write" is not a sandbox mode' }],
      } as ConfigView['error'],
    });
    const el = render(Settings, { config, status: undefined, home: '/home/ana' });
    const banner = el.querySelector('[data-testid="config-error"]')!;
    expect(banner.textContent).toContain('line 3, column 16');
    expect(banner.textContent).toContain('"read-write" is not a sandbox mode');
    expect(banner.textContent).toContain('last good configuration');
  });

  it('says when config.toml does not exist', () => {
    const el = render(Settings, { config: baseConfig({ exists: false }), status: undefined, home: '/home/ana' });
    expect(el.querySelector('[data-testid="no-config-file"]')!.textContent).toContain('every value below is a default');
  });
});

describe('SandboxProbes', () => {
  it('shows the backend, each probe, and what to do about a missing one', () => {
    const status = {
      platform: 'linux',
      requested: 'auto',
      backend: 'bwrap',
      probes: [
        { name: 'bubblewrap', ok: true, detail: 'bubblewrap 0.8.0 at /usr/bin/bwrap' },
        { name: 'kvm', ok: false, detail: '/dev/kvm does not exist', fix: 'load kvm_intel or kvm_amd' },
      ],
      guarantees: ['no network'],
    };
    const el = render(SandboxProbes, { status });
    expect(el.textContent).toContain('bubblewrap');
    expect(el.querySelector('li.bad')!.textContent).toContain('kvm');
    expect(el.textContent).toContain('/dev/kvm does not exist — load kvm_intel or kvm_amd');
  });

  it('says loudly when runs fall back to the application layer', () => {
    const el = render(SandboxProbes, {
      status: { platform: 'linux', requested: 'auto', backend: 'app', probes: [], guarantees: [], warning: 'WARNING: no OS sandbox backend is available' },
    });
    expect(el.querySelector('.alert')!.textContent).toContain('WARNING: no OS sandbox');
    expect(el.textContent).toContain('app layer only');
  });
});

describe('SandboxBanner', () => {
  const st = (indicator: object) =>
    ({ platform: 'linux', requested: 'auto', backend: 'landlock', probes: [], guarantees: [], indicator }) as unknown as SandboxStatus;

  it('raises the warning with the way out while the sandbox is degraded', () => {
    const el = render(SandboxBanner, {
      status: st({ level: 'amber', words: 'Landlock (degraded)', reasons: ['Landlock fallback: bubblewrap is missing'], fix: 'install bubblewrap: apt install bubblewrap' }),
    });
    const banner = el.querySelector('[data-testid="sandbox-banner"]')!;
    expect(banner.getAttribute('data-level')).toBe('amber');
    expect(banner.textContent).toContain('bubblewrap is missing');
    expect(el.querySelector('[data-testid="sandbox-fix"]')!.textContent).toContain('apt install bubblewrap');
    expect(el.querySelector('a')!.getAttribute('href')).toBe('#/settings/sandbox');
  });

  it('says red when commands are not sandboxed', () => {
    const el = render(SandboxBanner, { status: st({ level: 'red', words: 'not sandboxed', reasons: ['sandbox_mode is full-access'] }) });
    expect(el.querySelector('[data-testid="sandbox-banner"]')!.textContent).toContain('Commands are not sandboxed');
  });

  it('shows nothing while every promise holds', () => {
    const el = render(SandboxBanner, { status: st({ level: 'green', words: 'bubblewrap' }) });
    expect(el.querySelector('[data-testid="sandbox-banner"]')).toBeNull();
  });
});

describe('Sidebar sandbox line', () => {
  it('draws the red indicator as danger', () => {
    const facts = footerFacts({ path: '/c', exists: false, settings: [] } as unknown as ConfigView, {
      backend: 'bwrap',
      indicator: { level: 'red', words: 'not sandboxed' },
    } as unknown as SandboxStatus);
    const el = render(Sidebar, { current: 'waiting', waiting: 0, facts });
    const line = el.querySelector('[data-fact-line="sandbox"]')!;
    expect(line.getAttribute('data-tone')).toBe('danger');
    expect(line.textContent).toContain('not sandboxed');
  });
});
