import { describe, expect, it } from 'vitest';
import { displayPath, middleTruncate, tildePath } from './paths';

describe('tildePath', () => {
  it.each([
    ['/home/ana/code/x', '/home/ana', '~/code/x'],
    ['/home/ana', '/home/ana', '~'],
    ['/home/ana/', '/home/ana/', '~/'],
    ['/home/anabel/x', '/home/ana', '/home/anabel/x'], // a sibling that shares the prefix
    ['/etc/passwd', '/home/ana', '/etc/passwd'],
    ['/home/ana/x', '', '/home/ana/x'],
    ['/x', '/', '/x'], // home "/" would turn every path into ~
    ['/home/ana/x', '/home/ana/', '~/x'],
  ])('%s with home %s → %s', (path, home, want) => {
    expect(tildePath(path, home)).toBe(want);
  });
});

describe('middleTruncate', () => {
  it('keeps short paths whole', () => {
    expect(middleTruncate('~/code/api', 20)).toBe('~/code/api');
  });

  it('drops whole middle directories and keeps the start and the file name', () => {
    const got = middleTruncate('~/code/legacy-api/services/billing/notes.md', 30);
    expect(got).toBe('~/…/services/billing/notes.md');
    expect(Array.from(got).length).toBeLessThanOrEqual(30);
  });

  it('keeps the first directory of an absolute path', () => {
    expect(middleTruncate('/srv/data/projects/alpha/beta/report.txt', 24)).toBe('/srv/…/beta/report.txt');
  });

  it('cuts a file name longer than the room in its middle', () => {
    const got = middleTruncate('~/a/b/an-extremely-long-file-name-that-goes-on.txt', 20);
    expect(Array.from(got).length).toBeLessThanOrEqual(20);
    expect(got.startsWith('…/an-')).toBe(true);
    expect(got.endsWith('.txt')).toBe(true);
  });

  it('never exceeds the limit', () => {
    const path = '/very/deep/tree/with/many/levels/and/a/file.json';
    for (let max = 1; max <= path.length + 2; max++) {
      expect(Array.from(middleTruncate(path, max)).length).toBeLessThanOrEqual(max);
    }
  });

  it('counts characters, not UTF-16 units', () => {
    const got = middleTruncate('~/fotos/🌍🌍🌍/viaje/día-1.jpg', 22);
    expect(Array.from(got).length).toBeLessThanOrEqual(22);
    expect(got).toContain('día-1.jpg');
  });
});

describe('displayPath', () => {
  it('abbreviates home, then truncates', () => {
    expect(displayPath('/home/ana/Airlock/research/notes.md', '/home/ana', 48)).toBe('~/Airlock/research/notes.md');
    expect(displayPath('/home/ana/Airlock/research/2026/q4/drafts/notes.md', '/home/ana', 24)).toBe('~/…/q4/drafts/notes.md');
  });
});
