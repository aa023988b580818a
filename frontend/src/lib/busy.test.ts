import { describe, expect, it } from 'vitest';
import { busyState } from './busy.svelte';

describe('Busy', () => {
  it('is busy while the action runs, hands over its result, and clears the last error', async () => {
    const b = busyState();
    let finish: (v: number) => void = () => {};
    let got = 0;
    let called = false;
    const run = b.run(
      () => {
        called = true;
        return new Promise<number>((r) => (finish = r));
      },
      (v) => {
        got = v;
        expect(b.busy).toBe(true); // still busy as the result lands: both show at once
      },
    );
    expect(called).toBe(true);
    expect(b.busy).toBe(true);
    finish(7);
    await run;
    expect(got).toBe(7);
    expect(b.busy).toBe(false);
    expect(b.error).toBe('');
  });

  it('turns a failure into words, and the next try clears them', async () => {
    const b = busyState();
    await b.run(async () => {
      throw new Error('the core said no');
    });
    expect(b.error).toBe('the core said no');
    expect(b.busy).toBe(false);
    await b.run(async () => 'ok');
    expect(b.error).toBe('');
  });
});
