import { afterEach, describe, expect, it, vi } from 'vitest';
import { click, render, settle, unmountAll } from '../test/render';
import Waiting from '../pages/Waiting.svelte';
import type { DigestCard } from '../lib/api';
import { digestLines, showsDigest } from '../lib/digest';

afterEach(() => {
  unmountAll();
});

function card(over: Partial<DigestCard> = {}): DigestCard {
  return { id: 3, at: '2026-12-02T07:00:00Z', since: '2026-12-01T22:00:00Z', text: '', held_runs: 0, missed_runs: 0, failed_runs: 0, ...over };
}

describe('digestLines', () => {
  it('says each count in words, failures first, with where to see them', () => {
    const lines = digestLines(card({ failed_runs: 100, held_runs: 1, missed_runs: 412, paused_tasks: ['backup'] }));
    expect(lines.map((l) => l.text)).toEqual([
      '100 runs failed or were interrupted',
      '1 run is waiting for you (below)',
      '412 scheduled runs did not run',
      'Task backup paused itself after failing',
    ]);
    expect(lines[0]!.route).toBe('#/dispatch/runs?status=failed');
    expect(lines[2]!.route).toBe('#/dispatch/runs?status=skipped');
  });
  it('shows no card for nothing, a dismissed digest or none', () => {
    expect(showsDigest(card())).toBe(false);
    expect(showsDigest(card({ id: 0, failed_runs: 2 }))).toBe(false);
    expect(showsDigest(undefined)).toBe(false);
    expect(showsDigest(card({ failed_runs: 1 }))).toBe(true);
  });
});

describe('the digest card on Waiting for you', () => {
  it('shows above the empty state, links to the failed runs, and dismisses by its id', async () => {
    const ondismiss = vi.fn().mockResolvedValue(undefined);
    const el = render(Waiting, { approvals: [], roots: [], home: '/home/ana', digest: card({ failed_runs: 1, missed_runs: 2 }), ondismiss });
    const digest = el.querySelector('[data-digest="3"]')!;
    expect(digest.textContent).toContain('While Airlock was not watching');
    expect(digest.textContent).toContain('1 run failed or was interrupted');
    expect(digest.querySelector('[data-open="failed"]')!.getAttribute('href')).toBe('#/dispatch/runs?status=failed');
    expect(el.textContent).toContain('Nothing is waiting for you');
    click(digest.querySelector('[data-action="dismiss-digest"]'));
    await settle();
    expect(ondismiss).toHaveBeenCalledWith(3);
  });

  it('shows nothing once dismissed (id 0)', () => {
    const el = render(Waiting, { approvals: [], roots: [], home: '/home/ana', digest: card({ id: 0, failed_runs: 4 }) });
    expect(el.querySelector('[data-digest]')).toBeNull();
  });
});
