import { describe, expect, it } from 'vitest';
import { byUrgency, origin } from './approvals';
import { planTarget } from './ops';

describe('origin', () => {
  it.each([
    [{ run: '412', task: 'release-train', department: 'platform' }, 'from run 412 of “release-train” · dept. platform'],
    [{ session: 'refactor' }, 'from agent session “refactor”'],
    [{ task: 'nightly' }, 'from task “nightly”'],
    [{}, 'from an agent'],
  ])('%o → %s', (a, want) => {
    expect(origin(a)).toBe(want);
  });
});

describe('byUrgency', () => {
  it('puts P2 first, then P1, then P0, oldest first within a tier', () => {
    const list = [
      { id: 'p0', tier: 'P0', created_at: '2026-11-29T09:00:00Z' },
      { id: 'p1-new', tier: 'P1', created_at: '2026-11-29T12:00:00Z' },
      { id: 'p2', tier: 'P2', created_at: '2026-11-29T13:00:00Z' },
      { id: 'p1-old', tier: 'P1', created_at: '2026-11-29T08:00:00Z' },
    ];
    expect(byUrgency(list).map((x) => x.id)).toEqual(['p2', 'p1-old', 'p1-new', 'p0']);
    expect(list[0]!.id).toBe('p0'); // the input is not reordered
  });
});

describe('planTarget', () => {
  it('names the provider and whatever else is known', () => {
    expect(planTarget({ provider: 'aws', account: '1234', region: 'eu-west-1' })).toBe('aws · 1234 · eu-west-1');
    expect(planTarget({ provider: 'router', device: 'edge-1' })).toBe('router · edge-1');
    expect(planTarget({ provider: 'terraform' })).toBe('terraform');
  });
});
