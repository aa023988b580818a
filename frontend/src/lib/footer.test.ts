import { describe, expect, it } from 'vitest';
import { footerFacts, sandboxFact } from './footer';
import type { ConfigView, SandboxStatus } from './api';

const config = (over: Partial<ConfigView> = {}) => ({ path: '/c', exists: false, settings: [], ...over }) as ConfigView;

describe('footerFacts', () => {
  it('says it is connecting until the core answers', () => {
    expect(footerFacts(undefined).map((f) => f.value)).toEqual(['connecting…']);
  });

  it('claims nothing the core does not report', () => {
    const facts = footerFacts(config());
    expect(facts.map((f) => `${f.name}: ${f.value}`)).toEqual(['dispatch: no tasks yet', 'sandbox: checking…']);
    expect(facts.every((f) => f.tone === 'idle')).toBe(true);
  });

  it.each([
    [{ backend: 'bwrap', guarantees: ['no network'] }, 'bubblewrap', 'ok'],
    [{ backend: 'landlock', warning: 'network off relies on seccomp alone' }, 'Landlock', 'warn'],
    [{ backend: 'app', warning: 'WARNING: no OS sandbox' }, 'app layer only', 'warn'],
    [{ backend: '', error: 'backend "os" requested and none is available' }, 'unavailable', 'warn'],
  ])('shows the sandbox backend %o as %s (%s)', (st, value, tone) => {
    const fact = sandboxFact(st as unknown as SandboxStatus);
    expect(fact).toMatchObject({ value, tone });
  });

  it('adds an amber line when config.toml is broken', () => {
    const facts = footerFacts(config({ error: { path: '/c', problems: [] } as unknown as ConfigView['error'] }));
    expect(facts.at(-1)).toMatchObject({ name: 'config', tone: 'warn' });
  });
});
