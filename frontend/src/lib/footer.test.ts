import { describe, expect, it } from 'vitest';
import { dispatchFact, footerFacts, sandboxFact } from './footer';
import type { ConfigView, DispatchState, SandboxStatus } from './api';

const config = (over: Partial<ConfigView> = {}) => ({ path: '/c', exists: false, settings: [], ...over }) as ConfigView;

describe('footerFacts', () => {
  it('says it is connecting until the core answers', () => {
    expect(footerFacts(undefined).map((f) => f.value)).toEqual(['connecting…']);
  });

  it('claims nothing the core does not report', () => {
    const facts = footerFacts(config());
    expect(facts.map((f) => `${f.name}: ${f.value}`)).toEqual(['dispatch: checking…', 'sandbox: checking…']);
    expect(facts.every((f) => f.tone === 'idle')).toBe(true);
  });

  it.each([
    [{ backend: 'bwrap', guarantees: ['no network'], indicator: { level: 'green', words: 'bubblewrap' } }, 'bubblewrap', 'ok'],
    [{ backend: 'landlock', indicator: { level: 'amber', words: 'Landlock (degraded)', reasons: ['Landlock fallback'] } }, 'Landlock (degraded)', 'warn'],
    [{ backend: 'app', warning: 'WARNING: no OS sandbox', indicator: { level: 'red', words: 'not sandboxed' } }, 'not sandboxed', 'danger'],
    [{ backend: 'bwrap', indicator: { level: 'red', words: 'not sandboxed', reasons: ['sandbox_mode is full-access'] } }, 'not sandboxed', 'danger'],
    [{ backend: '', error: 'backend "os" requested and none is available', indicator: { level: 'red', words: 'sandbox unavailable' } }, 'sandbox unavailable', 'danger'],
    [{ backend: 'bwrap' }, 'bubblewrap', 'warn'],
  ])('shows the sandbox %o as %s (%s)', (st, value, tone) => {
    const fact = sandboxFact(st as unknown as SandboxStatus);
    expect(fact).toMatchObject({ value, tone });
  });

  it('never shows green bubblewrap under full-access', () => {
    const fact = sandboxFact({
      backend: 'bwrap',
      guarantees: ['writes only inside the writable roots'],
      indicator: { level: 'red', words: 'not sandboxed', reasons: ['sandbox_mode is full-access (config.toml)'], fix: 'set sandbox_mode = "workspace-write"' },
    } as unknown as SandboxStatus);
    expect(fact.tone).toBe('danger');
    expect(fact.value).not.toContain('bubblewrap');
    expect(fact.hint).toContain('full-access');
    expect(fact.hint).toContain('Way out: set sandbox_mode');
  });

  it('adds an amber line when config.toml is broken', () => {
    const facts = footerFacts(config({ error: { path: '/c', problems: [] } as unknown as ConfigView['error'] }));
    expect(facts.at(-1)).toMatchObject({ name: 'config', tone: 'warn' });
  });
});

const state = (over: Partial<DispatchState> = {}) => ({ paused: false, tasks: 0, running: 0, ...over }) as DispatchState;

describe('dispatchFact', () => {
  it.each([
    [state(), 'on', 'idle', 'pause'],
    [state({ tasks: 3 }), 'on', 'ok', 'pause'],
    [state({ tasks: 3, running: 2 }), 'on · 2 running', 'ok', 'pause'],
    [state({ tasks: 1, paused: true, paused_by: 'tray' }), 'paused', 'warn', 'resume'],
    [state({ tasks: 1, paused: true, running: 1 }), 'paused · 1 running', 'warn', 'resume'],
  ])('shows %o as %s (%s) with %s', (st, value, tone, action) => {
    expect(dispatchFact(st)).toMatchObject({ value, tone, action });
  });

  it('says who paused and that run-now still works', () => {
    const f = dispatchFact(state({ paused: true, paused_by: 'tray', paused_at: '2026-11-29T22:00:00Z' as unknown as DispatchState['paused_at'] }));
    expect(f.hint).toContain('by tray');
    expect(f.hint).toContain('Run now still works');
  });

  it('offers no action until the core answers', () => {
    expect(dispatchFact(undefined).action).toBeUndefined();
  });
});
