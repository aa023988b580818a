import { describe, expect, it } from 'vitest';
import { dispatchRoute, hashFor, pageFromHash, pages } from './nav';

describe('navigation', () => {
  it('has the five pages of the window, landing on Waiting for you', () => {
    expect(pages.map((p) => p.title)).toEqual(['Waiting for you', 'Dispatch', 'Departments', 'Ops', 'Settings']);
    expect(pageFromHash('')).toBe('waiting');
  });

  it.each([
    ['#/settings', 'settings'],
    ['#settings', 'settings'],
    ['#/ops/plan/3', 'ops'],
    ['#/departments?x=1', 'departments'],
    ['#/nowhere', 'waiting'],
  ])('%s → %s', (hash, want) => {
    expect(pageFromHash(hash)).toBe(want);
  });

  it('round-trips', () => {
    for (const p of pages) expect(pageFromHash(hashFor(p.id))).toBe(p.id);
  });
});

describe('dispatch routes', () => {
  it.each([
    ['#/dispatch', { kind: 'tasks' }],
    ['#/dispatch/runs', { kind: 'runs', status: '' }],
    ['#/dispatch/runs?status=failed', { kind: 'runs', status: 'failed' }],
    ['#/dispatch/runs/12', { kind: 'run', id: 12 }],
    ['#/dispatch/runs/twelve', { kind: 'tasks' }],
  ])('%s', (hash, want) => {
    expect(dispatchRoute(hash)).toEqual(want);
    expect(pageFromHash(hash)).toBe('dispatch');
  });
});
