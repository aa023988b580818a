import { describe, expect, it } from 'vitest';
import { parseTime, relativeTime } from './time';

const now = new Date('2026-11-29T12:00:00Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const MIN = 60_000;
const H = 60 * MIN;

describe('relativeTime', () => {
  it.each([
    [0, 'just now'],
    [-30_000, 'just now'],
    [30_000, 'in a moment'],
    [-2 * MIN, '2 min ago'],
    [-50_000, '1 min ago'],
    [5 * MIN, 'in 5 min'],
    [-59 * MIN, '59 min ago'],
    [3 * H, 'in 3 h'],
    [-23 * H, '23 h ago'],
    [-2 * 24 * H, '2 d ago'],
    [10 * 24 * H, 'in 10 d'],
  ])('%d ms → %s', (delta, want) => {
    expect(relativeTime(at(delta), now)).toBe(want);
  });

  it('falls back to the absolute date beyond two months', () => {
    const got = relativeTime(at(-90 * 24 * H), now);
    expect(got).not.toMatch(/ago|in /);
    expect(got).toMatch(/2026/);
  });

  it('says so for an invalid date', () => {
    expect(relativeTime(new Date('nope'), now)).toBe('unknown time');
  });
});

describe('parseTime', () => {
  it('reads RFC 3339 times from Go', () => {
    expect(parseTime('2026-11-29T19:45:03.123456789Z')?.toISOString()).toBe('2026-11-29T19:45:03.123Z');
  });
  it.each([[''], ['0001-01-01T00:00:00Z'], ['yesterday'], [undefined], [42]])('treats %s as no time', (v) => {
    expect(parseTime(v)).toBeUndefined();
  });
});
