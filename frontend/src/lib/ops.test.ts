import { describe, expect, it, vi } from 'vitest';
import {
  actionsFor,
  agentRequestsFor,
  blastRisk,
  chainState,
  copyText,
  diffStats,
  durationWords,
  entrySummary,
  eventTitle,
  eventTone,
  foldDiff,
  foldLines,
  looksLikeUnifiedDiff,
  newestFirst,
  parseDiff,
  planHash,
  planIdFromHash,
  planTarget,
  reversibilityRisk,
  statusTone,
  statusWords,
  stepsByDanger,
  timeline,
  worstRisk,
} from './ops';

describe('planTarget', () => {
  it('names the provider, then account, region or device', () => {
    expect(planTarget({ provider: 'aws', account: '123', region: 'eu-west-1' })).toBe('aws · 123 · eu-west-1');
    expect(planTarget({ provider: 'sqlite', device: 'db.sqlite' })).toBe('sqlite · db.sqlite');
    expect(planTarget({ provider: 'router' })).toBe('router');
  });
});

describe('plan routes', () => {
  it.each([
    ['#/ops/op-3be50407da291877', 'op-3be50407da291877'],
    ['#ops/op-1', 'op-1'],
    ['#/ops', ''],
    ['#/ops/', ''],
    ['#/settings/op-1', ''],
    ['', ''],
  ])('%s opens plan %j', (hash, id) => expect(planIdFromHash(hash)).toBe(id));
  it('round-trips', () => {
    expect(planIdFromHash(planHash('op-42'))).toBe('op-42');
    expect(planHash()).toBe('#/ops');
  });
});

describe('risk words', () => {
  it('says reversibility and blast radius in words, with the same tones everywhere', () => {
    expect(reversibilityRisk('reversible')).toMatchObject({ words: 'can be undone', tone: 'green' });
    expect(reversibilityRisk('hard')).toMatchObject({ words: 'hard to undo', tone: 'amber' });
    expect(reversibilityRisk('irreversible')).toMatchObject({ words: 'cannot be undone', tone: 'red' });
    expect(blastRisk('low').tone).toBe('grey');
    expect(blastRisk('med').words).toBe('medium blast radius');
    expect(blastRisk('high')).toMatchObject({ words: 'large blast radius', tone: 'red' });
  });
  it('treats an unknown value as the most dangerous, never as safe', () => {
    expect(reversibilityRisk('maybe')).toMatchObject({ tone: 'red', rank: 2 });
    expect(blastRisk('').words).toBe('blast radius not given');
  });
});

describe('stepsByDanger and worstRisk', () => {
  const steps = [
    { reversibility: 'reversible', blast_radius: 'low', id: 'a' },
    { reversibility: 'reversible', blast_radius: 'high', id: 'b' },
    { reversibility: 'irreversible', blast_radius: 'low', id: 'c' },
    { reversibility: 'hard', blast_radius: 'med', id: 'd' },
    { reversibility: 'reversible', blast_radius: 'high', id: 'e' },
  ];
  it('puts the least reversible first, then the largest blast radius, keeping plan order on ties', () => {
    expect(stepsByDanger(steps).map((s) => `${s.n}${s.step.id}`)).toEqual(['3c', '4d', '2b', '5e', '1a']);
    expect(steps.map((s) => s.id).join('')).toBe('abcde');
  });
  it('finds the worst of each', () => {
    expect(worstRisk(steps)).toEqual({ reversibility: 'irreversible', blast: 'high' });
    expect(worstRisk([])).toEqual({ reversibility: 'reversible', blast: 'low' });
  });
});

describe('timeline', () => {
  const row = (status: string) => {
    const t = timeline(status);
    return [t.plan, t.diff, t.approve, t.apply, t.verify, t.journal].join(' ');
  };
  it.each([
    ['draft', 'done current todo todo todo done'],
    ['diffed', 'done done current todo todo done'],
    ['expired', 'done done current todo todo done'],
    ['approved', 'done done done current todo done'],
    ['applying', 'done done done running todo done'],
    ['failed', 'done done done failed todo done'],
    ['applied', 'done done done done current done'],
    ['verified', 'done done done done done done'],
    ['verify_failed', 'done done done done failed done'],
    ['rejected', 'done done failed skipped skipped done'],
    ['superseded', 'done skipped skipped skipped skipped done'],
  ])('%s: %s', (status, want) => expect(row(status)).toBe(want));
  it('shows the diff skipped for a plan rejected before it was diffed', () => {
    expect(timeline('rejected', false).diff).toBe('skipped');
    expect(timeline('rejected', true).diff).toBe('done');
  });
  it('has words and a tone for every status', () => {
    expect(statusWords('approved')).toMatch(/token/);
    expect(statusWords('verify_failed')).toMatch(/verification failed/);
    expect(statusTone('verified')).toBe('green');
    expect(statusTone('rejected')).toBe('red');
    expect(statusTone('draft')).toBe('grey');
  });
});

describe('actionsFor', () => {
  const base = { hasDiffCommand: true, liveToken: false, hasDiff: false };
  it('offers the diff before approval, approval only with a diff and no live token', () => {
    expect(actionsFor('draft', base)).toEqual({ diff: true, approve: false, apply: false, verify: false, reject: true });
    expect(actionsFor('draft', { ...base, hasDiffCommand: false }).diff).toBe(false);
    expect(actionsFor('diffed', { ...base, hasDiff: true })).toMatchObject({ approve: true, apply: false });
    expect(actionsFor('diffed', { ...base, hasDiff: true, liveToken: true }).approve).toBe(false);
  });
  it('applies only approved plans, verifies only applied ones, rejects nothing already applied', () => {
    expect(actionsFor('approved', { ...base, hasDiff: true, liveToken: true })).toEqual({ diff: false, approve: false, apply: true, verify: false, reject: true });
    // A token that lapsed unused: approve again (the core marks the plan expired first); no apply.
    expect(actionsFor('approved', { ...base, hasDiff: true, liveToken: false })).toMatchObject({ approve: true, apply: false });
    expect(actionsFor('applied', base)).toMatchObject({ apply: false, verify: true, reject: false });
    expect(actionsFor('verified', base)).toMatchObject({ verify: true, reject: false, diff: false });
    expect(actionsFor('rejected', { ...base, hasDiff: true })).toEqual({ diff: false, approve: false, apply: false, verify: false, reject: false });
  });
});

describe('the diff', () => {
  const text = ['--- db.sqlite', '+++ db.sqlite after migrate.sql', '@@ -1 +1,2 @@', '-CREATE TABLE users(id);', '+CREATE TABLE users(id, email);', '+CREATE INDEX e;', ''].join('\n');
  it('classifies each line of a unified diff', () => {
    const lines = parseDiff(text);
    expect(lines.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'del', 'add', 'add']);
    expect(diffStats(lines)).toEqual({ added: 2, removed: 1 });
    expect(parseDiff('')).toEqual([]);
    expect(looksLikeUnifiedDiff(text)).toBe(true);
    expect(looksLikeUnifiedDiff('Plan: 1 to add, 0 to change')).toBe(false);
  });
  it('folds long runs of unchanged lines, keeping three on each side of a change', () => {
    const ctx = (n: number) => Array.from({ length: n }, (_, i) => ` line ${i}`);
    const lines = parseDiff(['@@ -1,30 +1,30 @@', ...ctx(10), '-old', '+new', ...ctx(20), '-gone'].join('\n'));
    const blocks = foldDiff(lines);
    expect(blocks.map((b) => `${b.kind}:${b.lines.length}`)).toEqual(['lines:1', 'fold:7', 'lines:8', 'fold:14', 'lines:4']);
    // Nothing is lost: every line is in a block, in order.
    expect(blocks.flatMap((b) => b.lines)).toEqual(lines);
  });
  it('leaves short runs alone and folds unchanged lines at the end', () => {
    const tail = Array.from({ length: 10 }, (_, i) => ` ${i}`);
    const lines = parseDiff(['-a', ' b', ' c', '+d', ...tail].join('\n'));
    expect(foldDiff(lines).map((b) => `${b.kind}:${b.lines.length}`)).toEqual(['lines:7', 'fold:7']);
    // Hiding fewer than 4 lines is not worth a fold.
    expect(foldDiff(parseDiff(['-a', ' 1', ' 2', ' 3', ' 4', ' 5', ' 6'].join('\n'))).map((b) => b.kind)).toEqual(['lines']);
  });
});

describe('folding and numbers', () => {
  it('folds long output and says how much', () => {
    const long = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n';
    expect(foldLines(long, 12)).toEqual({ head: Array.from({ length: 12 }, (_, i) => `l${i}`).join('\n'), hidden: 8 });
    expect(foldLines('one\ntwo\n')).toEqual({ head: 'one\ntwo', hidden: 0 });
  });
  it('prints durations', () => {
    expect(durationWords(43e6)).toBe('43 ms');
    expect(durationWords(2.1e9)).toBe('2.1 s');
    expect(durationWords(125e9)).toBe('2 min 5 s');
  });
});

describe('the journal', () => {
  it('orders newest first without touching the input', () => {
    const entries = [{ seq: 1 }, { seq: 3 }, { seq: 2 }];
    expect(newestFirst(entries).map((e) => e.seq)).toEqual([3, 2, 1]);
    expect(entries.map((e) => e.seq)).toEqual([1, 3, 2]);
  });
  it('names events and summarizes their detail as the CLI does', () => {
    expect(eventTitle('diff_attached')).toBe('Diff attached');
    expect(eventTitle('something_new')).toBe('something new');
    expect(eventTone('apply_refused')).toBe('red');
    expect(eventTone('verified')).toBe('green');
    expect(entrySummary({ event: 'approved', detail: { ttl: '10m0s', hash: 'd802596c1d4610c54dcd' } })).toBe('valid 10m0s · hash d802596c1d46');
    expect(entrySummary({ event: 'apply_finished', detail: { exit_code: 0, duration: '43ms' } })).toBe('exit 0 in 43ms');
    expect(entrySummary({ event: 'apply_failed', detail: { exit_code: 1, duration: '0s', reason: 'exit status 1' } })).toBe('exit 1 · exit status 1');
    expect(entrySummary({ event: 'verified', detail: { assertions: [{ passed: true }, { passed: false }] } })).toBe('1/2 assertions passed');
    expect(entrySummary({ event: 'rejected', detail: { reason: 'wrong window' } })).toBe('wrong window');
    expect(entrySummary({ event: 'diff_attached', detail: { sha256: '9107a4ddd189219f', exit_code: 1 } })).toBe('sha256 9107a4ddd189 · exit 1');
    expect(entrySummary({ event: 'planned' })).toBe('');
    expect(eventTone('confirmed')).toBe('green');
    expect(eventTone('confirm_withheld')).toBe('red');
    expect(eventTitle('confirm_withheld')).toMatch(/rolls back/);
    expect(entrySummary({ event: 'confirmed', detail: { command: './fakevyos confirm', exit_code: 0 } })).toBe('./fakevyos confirm · exit 0');
    expect(entrySummary({ event: 'confirm_withheld', detail: { command: 'c', exit_code: -1, reason: 'an assertion failed' } })).toBe('c · an assertion failed');
  });
});

describe('chainState', () => {
  it('says intact with the count', () => {
    const s = chainState({ entries: 7, last_seq: 7, ok: true });
    expect(s.state).toBe('intact');
    expect(s.title).toBe('Chain intact');
    expect(s.meaning).toMatch(/All 7 entries/);
  });
  it('names the first broken entry, what it means and what to do', () => {
    const s = chainState({
      entries: 7,
      last_seq: 7,
      ok: false,
      problems: [
        { kind: 'edited', seq: 5, id: 5, detail: 'content changed after it was written (it no longer matches its hash)' },
        { kind: 'edited', seq: 3, id: 3, detail: '' },
      ],
    });
    expect(s.state).toBe('broken');
    expect(s.brokenAt).toBe(3);
    expect(s.title).toBe('Chain broken at entry 3');
    expect(s.meaning).toMatch(/from 3 on cannot be trusted/);
    expect(s.todo).toMatch(/keep a copy of the database/);
    expect(s.problems).toEqual(['entry 5: content changed after it was written (it no longer matches its hash)', 'entry 3: changed after it was written']);
  });
  it('names a rolled back journal, broken from the first entry lost, and any kind it does not know', () => {
    const s = chainState({
      entries: 2,
      last_seq: 2,
      ok: false,
      problems: [
        { kind: 'rolled back', seq: 5, id: 0, detail: '' },
        { kind: 'something new', seq: 0, id: 0, detail: '' },
      ],
    });
    expect(s.state).toBe('broken');
    expect(s.brokenAt).toBe(3);
    expect(s.title).toBe('Chain broken at entry 3');
    expect(s.problems).toEqual([
      'entry 5: the journal was put back to an older state: the counter kept in your keyring remembers newer entries, which were deleted',
      'entry 0: something new',
    ]);
    const withDetail = chainState({ entries: 2, last_seq: 2, ok: false, problems: [{ kind: 'rolled back', seq: 5, id: 0, detail: 'the journal was rolled back: entries 3 to 5 were deleted' }] });
    expect(withDetail.problems).toEqual(['entry 5: the journal was rolled back: entries 3 to 5 were deleted']);
  });
  it('says when the check could not run, and never calls that intact', () => {
    const s = chainState(undefined, 'journal key from the keyring: locked');
    expect(s.state).toBe('unchecked');
    expect(s.meaning).toMatch(/locked/);
    expect(s.todo).toMatch(/keyring/);
    expect(chainState({ entries: 0, last_seq: 0, ok: true }).state).toBe('empty');
  });
});

describe('copyText', () => {
  it('uses the browser clipboard when allowed', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { clipboard: { writeText } });
    const fallback = vi.fn();
    expect(await copyText('tok', fallback)).toBe(true);
    expect(writeText).toHaveBeenCalledWith('tok');
    expect(fallback).not.toHaveBeenCalled();
    vi.unstubAllGlobals();
  });
  it('falls back to the desktop clipboard, and says when neither worked', async () => {
    vi.stubGlobal('navigator', { clipboard: { writeText: vi.fn().mockRejectedValue(new Error('denied')) } });
    const fallback = vi.fn().mockResolvedValue(true);
    expect(await copyText('tok', fallback)).toBe(true);
    expect(fallback).toHaveBeenCalledWith('tok');
    expect(await copyText('tok', vi.fn().mockRejectedValue(new Error('no')))).toBe(false);
    expect(await copyText('tok')).toBe(false);
    vi.unstubAllGlobals();
  });
});

describe('agentRequestsFor', () => {
  it('finds the agents waiting for approval of this plan', () => {
    const list = [
      { id: 'r1', tool: 'ops_approve', params: '{\n  "plan_id": "op-1",\n  "hash": "h"\n}' },
      { id: 'r2', tool: 'ops_approve', params: '{"plan_id": "op-2"}' },
      { id: 'r3', tool: 'bash', params: '{"plan_id": "op-1"}' },
      { id: 'r4', tool: 'ops_approve', params: 'not json' },
    ];
    expect(agentRequestsFor(list, 'op-1').map((a) => a.id)).toEqual(['r1']);
    expect(agentRequestsFor(list, 'op-9')).toEqual([]);
  });
});
