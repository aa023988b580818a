import { describe, expect, it } from 'vitest';
import { formatValue, group, humanDuration, layerLabel, overriddenNote } from './settings';
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
