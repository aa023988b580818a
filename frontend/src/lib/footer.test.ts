import { describe, expect, it } from 'vitest';
import { footerFacts } from './footer';
import type { ConfigView } from './api';

const config = (over: Partial<ConfigView> = {}) => ({ path: '/c', exists: false, settings: [], ...over }) as ConfigView;

describe('footerFacts', () => {
  it('says it is connecting until the core answers', () => {
    expect(footerFacts(undefined).map((f) => f.value)).toEqual(['connecting…']);
  });

  it('claims nothing the core does not report', () => {
    const facts = footerFacts(config());
    expect(facts.map((f) => `${f.name}: ${f.value}`)).toEqual(['dispatch: no tasks yet', 'sandbox: not checked yet']);
    expect(facts.every((f) => f.tone === 'idle')).toBe(true);
  });

  it('adds an amber line when config.toml is broken', () => {
    const facts = footerFacts(config({ error: { path: '/c', problems: [] } as unknown as ConfigView['error'] }));
    expect(facts.at(-1)).toMatchObject({ name: 'config', tone: 'warn' });
  });
});
