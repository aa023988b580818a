import { describe, expect, it } from 'vitest';
import {
  settingInfo,
  asList,
  checkPath,
  checkProtected,
  dangers,
  Edits,
  editNote,
  executionChoices,
  formatValue,
  grantWhere,
  group,
  hashForTab,
  humanDuration,
  layerLabel,
  overriddenNote,
  ruleMeaning,
  tabFromHash,
  tierMeaning,
  vmMissing,
  withItem,
  withoutItem,
} from './settings';
import type { Setting } from './api';

const s = (key: string, value: unknown, layer = 'default', detail?: string): Setting =>
  ({ key, value, layer, detail }) as Setting;

describe('layerLabel', () => {
  it.each([
    [s('k', 1, 'default'), 'default'],
    [s('k', 1, 'file', '/x/config.toml'), 'config.toml'],
    [s('k', 1, 'env', 'AIRLOCK_SANDBOX_MODE'), 'env AIRLOCK_SANDBOX_MODE'],
    [s('k', 1, 'flag', '--sandbox'), 'flag --sandbox'],
    [s('k', 1, 'env'), 'environment'],
  ])('%o → %s', (setting, want) => {
    expect(layerLabel(setting)).toBe(want);
  });

  it('warns only for layers above the file', () => {
    expect(overriddenNote(s('k', 1, 'env', 'AIRLOCK_NETWORK'))).toMatch(/AIRLOCK_NETWORK wins over config.toml/);
    expect(overriddenNote(s('k', 1, 'flag', '--network'))).toMatch(/--network/);
    expect(overriddenNote(s('k', 1, 'file'))).toBeUndefined();
    expect(overriddenNote(s('k', 1, 'default'))).toBeUndefined();
  });
});

describe('formatValue', () => {
  it.each([
    ['workspace.roots', ['~/Airlock', '~/code'], '~/Airlock, ~/code'],
    ['isolation.protected', [], 'none'],
    ['sandbox_workspace_write.network_access', false, 'off'],
    ['ops.strict', true, 'on'],
    ['api.tcp_address', '', 'off'],
    ['execution_mode', '', 'not set'],
    ['dispatch.concurrency', 2, '2'],
    ['dispatch.log_max_age', '720h', '30 days'],
  ])('%s = %o → %s', (key, value, want) => {
    expect(formatValue(key, value)).toBe(want);
  });

  it('turns hours into days only when exact', () => {
    expect(humanDuration('48h')).toBe('2 days');
    expect(humanDuration('36h')).toBe('36 hours');
    expect(humanDuration('90m')).toBe('90m');
  });
});

describe('group', () => {
  it('orders by section and keeps unknown keys in Other', () => {
    const groups = group([
      s('approval_policy', 'on-request'),
      s('brand_new.key', 1),
      s('sandbox_mode', 'workspace-write'),
      s('sandbox_workspace_write.network_access', false),
    ]);
    expect(groups.map((g) => g.section.title)).toEqual(['Sandbox', 'Approvals', 'Other']);
    expect(groups[0]?.rows.map((r) => r.key)).toEqual(['sandbox_mode', 'sandbox_workspace_write.network_access']);
    expect(groups[2]?.rows.map((r) => r.key)).toEqual(['brand_new.key']);
  });

  it('drops empty sections', () => {
    expect(group([])).toEqual([]);
  });
});

describe('settings tabs', () => {
  it.each([
    ['#/settings', 'general'],
    ['#/settings/sandbox', 'sandbox'],
    ['#/settings/permissions?x=1', 'permissions'],
    ['#/settings/nonsense', 'general'],
    ['#/waiting/sandbox', 'general'],
    ['', 'general'],
  ])('%s opens %s', (hash, tab) => {
    expect(tabFromHash(hash)).toBe(tab);
  });
  it('round-trips every tab through its hash', () => {
    for (const t of ['general', 'approvals', 'sandbox', 'permissions', 'hooks'] as const) expect(tabFromHash(hashForTab(t))).toBe(t);
    expect(hashForTab('general')).toBe('#/settings');
  });
});

describe('dangers', () => {
  const cfg = (mode: string, policy: string, network = false, backend = 'auto') => [
    s('sandbox_mode', mode),
    s('approval_policy', policy),
    s('sandbox_workspace_write.network_access', network),
    s('isolation.backend', backend),
  ];
  it('says nothing for the safe defaults', () => {
    expect(dangers(cfg('workspace-write', 'on-request'))).toEqual([]);
    expect(dangers(undefined)).toEqual([]);
  });
  it('warns in words about full-access with never', () => {
    const d = dangers(cfg('full-access', 'never'));
    expect(d.map((x) => x.id)).toEqual(['full-access-never']);
    expect(d[0]!.text).toMatch(/nothing asks you first/);
    expect(dangers(cfg('danger-full-access', 'never'))[0]!.id).toBe('full-access-never');
  });
  it('warns about full-access alone, network with never, and the app backend', () => {
    expect(dangers(cfg('full-access', 'on-request')).map((x) => x.id)).toEqual(['full-access']);
    expect(dangers(cfg('workspace-write', 'never', true)).map((x) => x.id)).toEqual(['network-never']);
    expect(dangers(cfg('workspace-write', 'never', false))).toEqual([]);
    expect(dangers(cfg('read-only', 'on-request', false, 'app')).map((x) => x.id)).toEqual(['backend-app']);
  });
});

describe('execution mode choices', () => {
  it('keeps sandbox and auto disabled, saying why, until the micro-VM is ready', () => {
    const off = executionChoices(false);
    expect(off.find((c) => c.value === 'local')!.disabled).toBeUndefined();
    expect(off.find((c) => c.value === 'sandbox')!.disabled).toContain(vmMissing);
    expect(off.find((c) => c.value === 'auto')!.disabled).toContain('the micro-VM runtime is not installed');
    expect(executionChoices(true).every((c) => !c.disabled)).toBe(true);
  });
});

describe('editNote', () => {
  it('says a change waits for the variable or flag to go', () => {
    expect(editNote(s('k', 1, 'env', 'AIRLOCK_NETWORK'))).toBe(
      'Set by the environment variable AIRLOCK_NETWORK: a change here is written to config.toml, but takes effect only once the variable is unset.',
    );
    expect(editNote(s('k', 1, 'flag', '--sandbox'))).toMatch(/flag --sandbox: .*starts without it/);
    expect(editNote(s('k', 1, 'file'))).toBeUndefined();
    expect(editNote(undefined)).toBeUndefined();
  });
});

describe('lists and paths', () => {
  it('accepts full paths only for roots', () => {
    expect(checkPath('/srv/data')).toBeUndefined();
    expect(checkPath('~/Airlock/shared')).toBeUndefined();
    expect(checkPath('~')).toBeUndefined();
    expect(checkPath('data')).toMatch(/not a full path/);
    expect(checkPath('  ')).toMatch(/Type a directory/);
  });
  it('accepts names for protected paths, but not the ones always protected', () => {
    expect(checkProtected('secrets/')).toBeUndefined();
    expect(checkProtected('.git')).toMatch(/always protected/);
    expect(checkProtected('')).toMatch(/Type a name/);
  });
  it('adds once and removes', () => {
    const l = ['/a'];
    expect(withItem(l, ' /b ')).toEqual(['/a', '/b']);
    expect(withItem(l, '/a')).toBe(l);
    expect(withItem(l, ' ')).toBe(l);
    expect(withoutItem(['/a', '/b'], '/a')).toEqual(['/b']);
    expect(asList(['x', 1])).toEqual(['x', '1']);
    expect(asList('x')).toEqual([]);
  });
});

describe('permission words', () => {
  it('says what each tier does', () => {
    expect(tierMeaning('P0')).toMatch(/silently/);
    expect(tierMeaning('P1')).toMatch(/first time/);
    expect(tierMeaning('P2')).toMatch(/every time/);
  });
  it('says where a grant applies', () => {
    expect(grantWhere({ scope: 'session', session: 'claude:1' })).toBe('this session only (claude:1)');
    expect(grantWhere({ scope: 'always', department: 'research' })).toBe('always, in department research');
    expect(grantWhere({ scope: 'always', workspace: '/w' })).toBe('always, in /w');
    expect(grantWhere({ scope: 'always' })).toBe('always, everywhere');
    expect(grantWhere({ scope: 'task', task: 'backup' })).toBe('every run of task backup');
    expect(grantWhere({ scope: 'department', department: 'research' })).toBe('every task of department research');
  });
  it('says a rule in words', () => {
    expect(ruleMeaning({ tool: 'bash', pattern: 'git status *', action: 'allow' })).toMatch(/bash matching “git status \*” runs without asking/);
    expect(ruleMeaning({ tool: 'web_fetch', pattern: '', action: 'deny' })).toBe('every web_fetch call is refused, whatever else says');
  });
});

describe('Edits', () => {
  it('tracks a key while it saves and keeps its error', async () => {
    let changes = 0;
    const e = new Edits(() => changes++);
    let finish!: () => void;
    const p = e.run('k', () => new Promise<void>((ok) => (finish = ok)));
    expect(e.busy.has('k')).toBe(true);
    expect(await e.run('k', async () => {})).toBe(false); // one edit of a key at a time
    finish();
    expect(await p).toBe(true);
    expect(e.busy.has('k')).toBe(false);
    expect(await e.run('k', () => Promise.reject('config.toml changed on disk; reload and try again'))).toBe(false);
    expect(e.errors.get('k')).toBe('config.toml changed on disk; reload and try again');
    expect(await e.run('k', async () => {})).toBe(true);
    expect(e.errors.has('k')).toBe(false);
    expect(changes).toBeGreaterThanOrEqual(6);
  });
});

describe('every setting says what it means', () => {
  it.each(['dispatch.concurrency', 'dispatch.run_log_cap', 'dispatch.log_max_age', 'dispatch.log_max_total', 'workspace.roots', 'isolation.protected'])('%s', (key) => {
    expect(settingInfo[key]!.explain!(2)).toBeTruthy();
  });
  it('counts runs in words', () => {
    expect(settingInfo['dispatch.concurrency']!.explain!(1)).toMatch(/^At most 1 scheduled run at a time/);
  });
});
