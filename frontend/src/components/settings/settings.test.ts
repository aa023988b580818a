import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { render, settle, unmountAll } from '../../test/render';
import SandboxTab from './SandboxTab.svelte';
import ApprovalsTab from './ApprovalsTab.svelte';
import PermissionsTab from './PermissionsTab.svelte';
import HooksTab from './HooksTab.svelte';
import ProfilePicker from './ProfilePicker.svelte';
import Settings from '../../pages/Settings.svelte';
import type { ConfigView, Setting } from '../../lib/api';
import type { HooksView, ProfileList, PermissionsView, SettingsApi } from '../../lib/api-settings';

afterEach(() => {
  unmountAll();
  location.hash = '';
});

const st = (key: string, value: unknown, layer = 'default', detail?: string) => ({ key, value, layer, detail }) as Setting;

function config(over: Setting[] = []): ConfigView {
  const base = [
    st('sandbox_mode', 'workspace-write'),
    st('approval_policy', 'on-request'),
    st('approvals_reviewer', 'user'),
    st('execution_mode', 'local'),
    st('sandbox_workspace_write.network_access', false),
    st('sandbox_workspace_write.writable_roots', []),
    st('isolation.protected', []),
    st('isolation.backend', 'auto'),
    st('ops.strict', false),
    st('profile', ''),
  ];
  const settings = base.map((b) => over.find((o) => o.key === b.key) ?? b);
  return { path: '/home/ana/.config/airlock/config.toml', exists: true, loaded_at: '2026-11-29T12:00:00Z', settings } as ConfigView;
}

const perms = (over: Partial<PermissionsView> = {}): PermissionsView =>
  ({
    approval_policy: 'on-request',
    approval_policy_from: 'default',
    reviewer: 'user',
    reviewer_from: 'default',
    reviewer_command: [],
    ops_strict: false,
    ops_strict_from: 'default',
    tiers: [
      { tool: 'read_file', tier: 'P0', default: 'P0', from: 'default', fixed: false },
      { tool: 'bash', tier: 'P2', default: 'P1', from: 'file', fixed: false },
      { tool: 'ops_apply', tier: 'P2', default: 'P2', from: 'default', fixed: true },
      { tool: 'exec', tier: 'P0', default: 'P1', from: 'file', fixed: false, warning: 'exec is P0: every shell command it runs runs without asking you' },
    ],
    rules: [{ index: 0, tool: 'bash', pattern: 'git status *', action: 'allow' }],
    grants: [
      { id: 'g-1', tool: 'write_file', pattern: '~/Airlock/*', scope: 'always', department: 'research', created_by: 'window', created_at: '2026-11-29T11:00:00Z' },
    ],
    ignored: [],
    ...over,
  }) as PermissionsView;

function fakeApi(over: Partial<SettingsApi> = {}): SettingsApi {
  return {
    setSetting: vi.fn(async () => config()),
    resetSetting: vi.fn(async () => config()),
    permissions: vi.fn(async () => perms()),
    setTier: vi.fn(async () => perms()),
    addRule: vi.fn(async () => perms()),
    removeRule: vi.fn(async () => perms({ rules: [] })),
    revokeGrant: vi.fn(async () => perms({ grants: [] })),
    hooks: vi.fn(async () => ({ hooks: [], agents: [] }) as unknown as HooksView),
    profiles: vi.fn(async () => ({ profiles: [], current: '' }) as unknown as ProfileList),
    confirmConfig: vi.fn(async () => config()),
    ...over,
  };
}

const noListen = () => () => {};

describe('SandboxTab', () => {
  it('shows each value with its meaning and layer, and keeps the micro-VM modes off until it is ready', () => {
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api: fakeApi() });
    const mode = el.querySelector('[data-key="sandbox_mode"]')!;
    expect((mode.querySelector('input[value="workspace-write"]') as HTMLInputElement).checked).toBe(true);
    expect(mode.textContent).toContain("Writes only inside the run's own working directory");
    expect(mode.textContent).toContain('Reads are open everywhere but your credentials');
    expect(mode.querySelector('[data-layer]')!.getAttribute('data-layer')).toBe('default');
    const exec = el.querySelector('[data-key="execution_mode"]')!;
    expect((exec.querySelector('input[value="sandbox"]') as HTMLInputElement).disabled).toBe(true);
    expect((exec.querySelector('input[value="auto"]') as HTMLInputElement).disabled).toBe(true);
    expect((exec.querySelector('input[value="local"]') as HTMLInputElement).disabled).toBe(false);
    expect(el.querySelector('[data-testid="vm-state"]')!.textContent).toBe('micro-VM: the micro-VM runtime is not installed');
    expect(el.querySelector('[data-testid="dangers"]')).toBeNull();
    expect(el.querySelector('[data-list="protected paths"]')!.textContent).toContain('.git');
  });

  it('offers the three network choices and writes allowlist as config.toml spells it', () => {
    const api = fakeApi();
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api });
    const row = el.querySelector('[data-key="sandbox_workspace_write.network_access"]')!;
    expect([...row.querySelectorAll('input')].map((i) => i.dataset.value)).toEqual(['off', 'allowlist', 'on']);
    (row.querySelector('input[data-value="allowlist"]') as HTMLInputElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('sandbox_workspace_write.network_access', 'allowlist');
    const shown = render(SandboxTab, { config: config([st('sandbox_workspace_write.network_access', 'allowlist', 'env')]), sandbox: undefined, home: '/home/ana', api });
    expect(shown.querySelector('[data-key="sandbox_workspace_write.network_access"]')!.textContent).toContain("only the allowed domains, through Airlock's egress proxy");
  });

  it('adds an allowed domain through the façade, refusing a URL first', () => {
    const api = fakeApi();
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api });
    const list = el.querySelector('[data-list="allowed domains"]')!;
    const input = list.querySelector('input') as HTMLInputElement;
    input.value = 'https://api.example.com/v1';
    input.dispatchEvent(new Event('input'));
    (list.querySelector('form') as HTMLFormElement).requestSubmit();
    flushSync();
    expect(list.querySelector('[role="alert"]')!.textContent).toMatch(/without a scheme/);
    input.value = '*.pypi.org';
    input.dispatchEvent(new Event('input'));
    (list.querySelector('form') as HTMLFormElement).requestSubmit();
    flushSync();
    expect(api.setSetting).toHaveBeenCalledWith('network.allowed_domains', ['*.pypi.org']);
  });

  it('writes ask_unknown and allow_local, and shows allowing local destinations as dangerous', () => {
    const api = fakeApi();
    const cfg = config([]);
    cfg.settings.push(st('network.ask_unknown', true), st('network.allow_local', false));
    const el = render(SandboxTab, { config: cfg, sandbox: undefined, home: '/home/ana', api });
    const ask = el.querySelector('[data-key="network.ask_unknown"]')!;
    expect(ask.textContent).toContain('waits as a P1 request');
    (ask.querySelector('[role="switch"]') as HTMLButtonElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('network.ask_unknown', false);
    const local = el.querySelector('[data-key="network.allow_local"]')!;
    expect(local.textContent).toContain('is still refused');
    expect(el.querySelector('[data-testid="allow-local-warning"]')).toBeNull();
    expect(el.querySelector('[data-danger="allow-local"]')).toBeNull();
    (local.querySelector('[role="switch"]') as HTMLButtonElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('network.allow_local', true);

    const on = config([]);
    on.settings.push(st('network.ask_unknown', false, 'file'), st('network.allow_local', true, 'file'));
    const shown = render(SandboxTab, { config: on, sandbox: undefined, home: '/home/ana', api });
    expect(shown.querySelector('[data-key="network.ask_unknown"]')!.textContent).toContain('refused at once');
    expect(shown.querySelector('[data-key="network.allow_local"]')!.textContent).toMatch(/^.*Dangerous: allowlist runs may reach this machine's own services/);
    expect(shown.querySelector('[data-testid="allow-local-warning"]')!.textContent).toContain("local services");
    expect(shown.querySelector('[data-danger="allow-local"]')!.textContent).toContain("this machine's own services");
  });

  it('enables the micro-VM modes once it is ready', () => {
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', vmReady: true, api: fakeApi() });
    expect((el.querySelector('[data-key="execution_mode"] input[value="sandbox"]') as HTMLInputElement).disabled).toBe(false);
    expect(el.querySelector('[data-testid="vm-state"]')!.textContent).toBe('micro-VM: ready');
  });

  it('writes the network switch and a writable root through the façade', async () => {
    const api = fakeApi();
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api });
    (el.querySelector('[data-key="sandbox_workspace_write.network_access"] input[data-value="on"]') as HTMLInputElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('sandbox_workspace_write.network_access', true);
    const list = el.querySelector('[data-list="writable roots"]')!;
    const input = list.querySelector('input') as HTMLInputElement;
    input.value = 'relative';
    input.dispatchEvent(new Event('input'));
    (list.querySelector('form') as HTMLFormElement).requestSubmit();
    flushSync();
    expect(list.querySelector('[role="alert"]')!.textContent).toMatch(/not a full path/);
    input.value = '~/Airlock/shared';
    input.dispatchEvent(new Event('input'));
    (list.querySelector('form') as HTMLFormElement).requestSubmit();
    expect(api.setSetting).toHaveBeenCalledWith('sandbox_workspace_write.writable_roots', ['~/Airlock/shared']);
  });

  it('shows the refusal of an edit on its row', async () => {
    const api = fakeApi({ setSetting: vi.fn(() => Promise.reject('config.toml changed on disk; reload and try again')) });
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api });
    (el.querySelector('[data-key="sandbox_mode"] input[value="read-only"]') as HTMLInputElement).click();
    await settle();
    expect(el.querySelector('[data-key="sandbox_mode"] [data-error]')!.textContent).toBe('config.toml changed on disk; reload and try again');
  });

  it('warns in words about full-access with never, and says when a variable wins over the file', () => {
    const el = render(SandboxTab, {
      config: config([
        st('sandbox_mode', 'full-access', 'file', '/c.toml'),
        st('approval_policy', 'never', 'file', '/c.toml'),
        st('sandbox_workspace_write.network_access', false, 'env', 'AIRLOCK_NETWORK'),
      ]),
      sandbox: undefined,
      home: '/home/ana',
      api: fakeApi(),
    });
    expect(el.querySelector('[data-danger="full-access-never"]')!.textContent).toMatch(/full-access with approval policy never/);
    const net = el.querySelector('[data-key="sandbox_workspace_write.network_access"]')!;
    expect(net.querySelector('[data-note]')!.textContent).toMatch(/AIRLOCK_NETWORK: a change here is written to config.toml, but takes effect only once the variable is unset/);
    expect(el.querySelector('[data-key="sandbox_mode"] [data-action="reset"]')).not.toBeNull();
  });
});

describe('ApprovalsTab', () => {
  it('shows the policy with its meaning and writes a new one', async () => {
    const api = fakeApi();
    const el = render(ApprovalsTab, { config: config(), api, listen: noListen });
    await settle();
    const row = el.querySelector('[data-key="approval_policy"]')!;
    expect(row.querySelector('[data-meaning]')!.textContent).toMatch(/Asks as the tiers say/);
    (row.querySelector('input[value="never"]') as HTMLInputElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('approval_policy', 'never');
    expect(el.querySelector('[data-testid="reviewer-command"]')!.textContent).toMatch(/No reviewer command configured/);
  });
});

describe('ProfilePicker', () => {
  const list = {
    current: 'read-only',
    profiles: [
      { name: 'read-only', title: 'Read only', description: 'Reads, writes nothing.', sandbox_mode: 'read-only', approval_policy: 'on-request', source: 'built-in' },
      {
        name: 'full-access',
        title: 'Full access',
        description: 'No sandbox.',
        sandbox_mode: 'full-access',
        approval_policy: 'never',
        warning: 'nothing confines the agent and nothing asks you first',
        source: 'built-in',
      },
      { name: 'demo', title: 'Demonstration', description: 'Asks every time.', tiers: { bash: 'P2', read_file: 'P2' }, source: 'built-in' },
    ],
  } as unknown as ProfileList;
  const withProfile = (name: string) => config([st('profile', name, 'file')]);

  it('lists each profile in words with the warning of the dangerous one, marks the chosen one and writes a new choice', async () => {
    const api = fakeApi({ profiles: vi.fn(async () => list) });
    const el = render(ProfilePicker, { config: withProfile('read-only'), api });
    await settle();
    const picker = el.querySelector('[data-testid="profile-picker"]')!;
    expect((picker.querySelector('[data-profile="read-only"] input') as HTMLInputElement).checked).toBe(true);
    expect(picker.querySelector('[data-profile="full-access"]')!.textContent).toContain('nothing confines the agent');
    expect(picker.querySelector('[data-profile="read-only"]')!.textContent).not.toContain('nothing confines');
    expect(picker.querySelector('[data-profile="demo"]')!.textContent).toContain('tiers: bash P2; 2 at P2');
    (picker.querySelector('[data-profile="demo"] input') as HTMLInputElement).click();
    expect(api.setSetting).toHaveBeenCalledWith('profile', 'demo');
    await settle();
    (picker.querySelector('[data-profile=""] input') as HTMLInputElement).click();
    expect(api.resetSetting).toHaveBeenCalledWith('profile');
  });
});

describe('PermissionsTab', () => {
  it('lists tiers, rules and grants, and revokes a grant', async () => {
    const api = fakeApi();
    const el = render(PermissionsTab, { api, listen: noListen });
    await settle();
    const bash = el.querySelector('tr[data-tool="bash"]')!;
    expect((bash.querySelector('select') as HTMLSelectElement).value).toBe('P2');
    expect(bash.textContent).toContain('config.toml');
    expect(bash.textContent).toContain('use the default (P1)');
    expect((el.querySelector('tr[data-tool="ops_apply"] select') as HTMLSelectElement).disabled).toBe(true);
    expect(el.querySelector('[data-rule="0"]')!.textContent).toMatch(/runs without asking/);
    const grant = el.querySelector('[data-grant="g-1"]')!;
    expect(grant.textContent).toContain('always, in department research');
    (grant.querySelector('[data-action="revoke"]') as HTMLButtonElement).click();
    await settle();
    expect(api.revokeGrant).toHaveBeenCalledWith('g-1');
    expect(el.querySelector('[data-grant="g-1"]')).toBeNull();
    expect(el.querySelector('[data-testid="no-grants"]')).not.toBeNull();
  });

  it("draws the core's red line under a shell tool at P0", async () => {
    const el = render(PermissionsTab, { api: fakeApi(), listen: noListen });
    await settle();
    expect(el.querySelector('[data-warning="exec"]')!.textContent).toMatch(/exec is P0: every shell command it runs runs without asking you/);
    expect(el.querySelector('[data-warning="bash"]')).toBeNull();
  });

  it('changes a tier and removes a rule by its index and text', async () => {
    const api = fakeApi();
    const el = render(PermissionsTab, { api, listen: noListen });
    await settle();
    const sel = el.querySelector('tr[data-tool="read_file"] select') as HTMLSelectElement;
    sel.value = 'P1';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    expect(api.setTier).toHaveBeenCalledWith('read_file', 'P1');
    await settle();
    (el.querySelector('[data-rule="0"] button') as HTMLButtonElement).click();
    expect(api.removeRule).toHaveBeenCalledWith(0, 'bash', 'git status *');
  });
});

describe('HooksTab', () => {
  it('says which agents ask Airlock and how to wire the others', async () => {
    const api = fakeApi({
      hooks: vi.fn(async () =>
        ({
          hooks: [{ when: 'before_tool_use', command: ['/usr/local/bin/check'], tools: ['bash'], timeout: '5s' }],
          agents: [
            { agent: 'Claude Code', kind: 'hook', installed: true, file: '/home/ana/.claude/settings.json', detail: 'PreToolUse runs "airlock hook claude"', meaning: 'asks', install: 'x' },
            { agent: 'Codex', kind: 'mcp', installed: false, file: '/home/ana/.codex/config.toml', detail: 'no config.toml yet', meaning: 'tools', install: '[mcp_servers.airlock]' },
          ],
        }) as unknown as HooksView,
      ),
    });
    const el = render(HooksTab, { home: '/home/ana', api, listen: noListen });
    await settle();
    expect(el.querySelector('[data-agent="Claude Code"]')!.textContent).toContain('✓ installed');
    expect(el.querySelector('[data-agent="Codex"]')!.textContent).toContain('[mcp_servers.airlock]');
    expect(el.querySelector('[data-hook="before_tool_use"]')!.textContent).toContain('for bash · timeout 5s');
  });
});

describe('Settings tabs', () => {
  it('opens the tab the hash names', () => {
    location.hash = '#/settings/sandbox';
    const vm = {
      status: vi.fn(() => Promise.resolve({ supported: true, runtime_ready: false, image_ready: false, downloading: false } as never)),
      install: vi.fn(() => Promise.resolve()),
      cancel: vi.fn(() => Promise.resolve()),
      onStatus: vi.fn(() => () => {}),
    };
    const el = render(Settings, { config: config(), status: undefined, home: '/home/ana', api: fakeApi(), vm });
    expect(el.querySelector('[data-tab-panel]')!.getAttribute('data-tab-panel')).toBe('sandbox');
    // The micro-VM install section sits under the Sandbox tab, on the installer's status.
    expect(el.querySelector('[data-testid="vm-install"]')).not.toBeNull();
    expect(vm.status).toHaveBeenCalled();
    expect(el.querySelector('a[data-tab="sandbox"]')!.getAttribute('aria-selected')).toBe('true');
    expect(el.querySelector('[data-key="execution_mode"]')).not.toBeNull();
  });
});

describe('ChoiceGroup', () => {
  it('keeps showing the value in force after a click until the configuration changes', () => {
    const api = fakeApi({ setSetting: vi.fn(() => new Promise<ConfigView>(() => {})) });
    const el = render(SandboxTab, { config: config(), sandbox: undefined, home: '/home/ana', api });
    const ro = el.querySelector('[data-key="sandbox_mode"] input[value="read-only"]') as HTMLInputElement;
    ro.click();
    flushSync();
    expect(api.setSetting).toHaveBeenCalledWith('sandbox_mode', 'read-only');
    expect(ro.checked).toBe(false);
    expect((el.querySelector('[data-key="sandbox_mode"] input[value="workspace-write"]') as HTMLInputElement).checked).toBe(true);
    expect(el.querySelector('[data-key="sandbox_mode"]')!.textContent).toContain('saving…');
  });
});

describe('a change that waits', () => {
  it('says what config.toml loosens and confirms the file that was shown', () => {
    const api = fakeApi();
    const cfg = config();
    cfg.pending = {
      keys: ['approvals.terminal_proof'],
      digest: 'd1g3st',
      since: '2026-11-29T12:00:00Z',
      message: 'config.toml loosens approvals.terminal_proof: … `airlock config confirm` …',
    } as ConfigView['pending'];
    const el = render(Settings, { config: cfg, status: undefined, home: '/home/ana', api });
    const banner = el.querySelector('[data-testid="config-pending"]')!;
    expect(banner.textContent).toContain('approvals.terminal_proof');
    expect(banner.textContent).toContain('airlock config confirm');
    (el.querySelector('[data-testid="config-confirm"]') as HTMLButtonElement).click();
    expect(api.confirmConfig).toHaveBeenCalledWith('d1g3st');
  });

  it('shows nothing when nothing waits', () => {
    const el = render(Settings, { config: config(), status: undefined, home: '/home/ana', api: fakeApi() });
    expect(el.querySelector('[data-testid="config-pending"]')).toBeNull();
  });
});

describe('GeneralTab', () => {
  it('edits the workspace roots, saying what a root grants before the click', () => {
    const api = fakeApi();
    const cfg = config([]);
    cfg.settings.push(st('workspace.roots', ['~/Airlock']));
    const el = render(Settings, { config: cfg, status: undefined, home: '/home/ana', api });
    const list = el.querySelector('[data-list="workspace roots"]')!;
    expect(list.textContent).toContain('~/Airlock');
    expect(list.textContent).toContain('start anywhere inside it without asking you');
    const remove = [...list.querySelectorAll('button')].find((b) => b.getAttribute('aria-label') === 'remove ~/Airlock')!;
    remove.click();
    expect(api.setSetting).toHaveBeenCalledWith('workspace.roots', []);
  });

  it('says which secret store is in use: the file store names its file', () => {
    const status = (keyring: object) =>
      ({
        kind: 'daemon',
        pid: 7,
        started_at: '2026-11-29T12:00:00Z',
        paths: { database: '/d/airlock.db', run_logs: '/d/runs', socket: '/r/airlock.sock' },
        keyring,
      }) as never;
    let el = render(Settings, {
      config: config(),
      status: status({ ok: true, store: 'file', where: '/home/ana/.local/share/airlock/secrets/secrets.json' }),
      home: '/home/ana',
      api: fakeApi(),
    });
    let row = el.querySelector('[data-testid="secret-store"]')!.textContent!;
    expect(row).toContain('file store');
    expect(row).toContain('~/.local/share/airlock/secrets/secrets.json');
    expect(row).toContain('answers');
    unmountAll();
    el = render(Settings, {
      config: config(),
      status: status({ ok: false, store: 'keyring', where: 'the OS keyring, service airlock', error: 'no D-Bus session bus' }),
      home: '/home/ana',
      api: fakeApi(),
    });
    row = el.querySelector('[data-testid="secret-store"]')!.textContent!;
    expect(row).toContain('OS keyring');
    expect(row).toContain('unavailable');
    expect(row).toContain('no D-Bus session bus');
  });
});
