import { describe, expect, it } from 'vitest';
import { summaryText, alwaysChoices, canAllowAlways, canAllowSession, sessionGrant, coalesce, foldText, heldItems, heldReason, heldTitle, needsReview, operationWords, PopupQueue, waitingCount } from './inbox';
import type { InboxItem } from './api';

const item = (over: Partial<InboxItem>): InboxItem => ({ kind: 'directory', key: 'dir:/x', asked: '', answer: '', actions: [], since: '', ...over }) as InboxItem;

describe('heldItems and waitingCount', () => {
  it('leaves out the approvals the window lists with their own row, keeps the rest', () => {
    const items = [item({ kind: 'approval', key: 'r1' }), item({ kind: 'approval', key: 'run:7' }), item({ key: 'dir:/var/tmp/x' }), item({ kind: 'paused_task', key: 'task:t' })];
    const held = heldItems(items, [{ id: 'r1' }]);
    expect(held.map((h) => h.key)).toEqual(['run:7', 'dir:/var/tmp/x', 'task:t']);
    expect(waitingCount([{}], held)).toBe(4);
  });
});

describe('what a request offers', () => {
  it.each([
    [{ tier: 'P1', interactive_only: false, scopes: ['once', 'always'] }, true, false],
    [{ tier: 'P1', interactive_only: false, scopes: ['once'] }, false, false],
    [{ tier: 'P1', interactive_only: false, scopes: ['once', 'task'] }, true, false],
    [{ tier: 'P1', interactive_only: true, scopes: ['once', 'always'] }, false, true],
    [{ tier: 'P2', interactive_only: false, scopes: ['once', 'always'] }, false, true],
  ])('%j: always %s, review %s', (a, always, review) => {
    expect(canAllowAlways(a)).toBe(always);
    expect(needsReview(a)).toBe(review);
  });

  it('says what each remembered scope grants', () => {
    const c = alwaysChoices({ tool: 'write_file', scopes: ['once', 'session', 'always'], session: 'refactor', department: 'research' });
    expect(c.map((x) => x.scope)).toEqual(['session', 'always']);
    expect(c[0]!.grants).toContain('agent session “refactor”');
    expect(c[1]!.grants).toContain('department research');
    expect(alwaysChoices({ tool: 'bash', scopes: ['once', 'always'], session: '', department: '' }).map((x) => x.scope)).toEqual(['always']);
  });

  it('offers this task and this department only where the request has them', () => {
    const run = { tool: 'network_domain', scopes: ['once', 'task', 'department'], session: '', task: 'backup', department: 'research' };
    const c = alwaysChoices(run);
    expect(c.map((x) => [x.scope, x.label])).toEqual([['task', 'For this task'], ['department', 'For this department']]);
    expect(c[0]!.grants).toContain('every later run of task backup and no other');
    expect(c[1]!.grants).toContain('every task and session of department research');
    expect(alwaysChoices({ ...run, task: '', department: '' })).toEqual([]);
  });

  it.each([
    [{ tier: 'P1', interactive_only: false, scopes: ['once', 'session', 'always'], session: 'refactor' }, true],
    [{ tier: 'P1', interactive_only: false, scopes: ['once', 'always'], session: 'refactor' }, false],
    [{ tier: 'P1', interactive_only: false, scopes: ['once', 'session'], session: '' }, false],
    [{ tier: 'P1', interactive_only: true, scopes: ['once', 'session'], session: 'refactor' }, false],
    [{ tier: 'P2', interactive_only: false, scopes: ['once', 'session'], session: 'refactor' }, false],
  ])('%j: allowed for the session by default: %s', (a, session) => {
    expect(canAllowSession(a)).toBe(session);
  });

  it('leaves the session out of Allow always when it has its own button', () => {
    const a = { tool: 'write_file', scopes: ['once', 'session', 'always'] as const, session: 'refactor', department: 'research' };
    expect(alwaysChoices({ ...a, scopes: [...a.scopes] }, ['session']).map((x) => x.scope)).toEqual(['always']);
    expect(sessionGrant(a)).toBe('write_file with these parameters, until agent session “refactor” ends');
  });

  it('says the operation in plain words, the kind first', () => {
    expect(operationWords({ tool: 'bash', kind: 'bash_destructive' })).toBe('Run a shell command that can destroy data');
    expect(operationWords({ tool: 'write_file', kind: '' })).toBe('Write a file');
    expect(operationWords({ tool: 'frobnicate', kind: '' })).toBe('Use the tool frobnicate');
  });
});

describe('foldText', () => {
  it('keeps short values whole and folds long ones', () => {
    expect(foldText('{"a": 1}')).toEqual({ head: '{"a": 1}', folded: false });
    const long = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const f = foldText(long, 3);
    expect(f.folded).toBe(true);
    expect(f.head).toBe('line 0\nline 1\nline 2 …');
    expect(foldText('x'.repeat(1000), 8, 100).head.length).toBe(102);
  });
});

describe('held groups', () => {
  it('names who waits and why', () => {
    expect(heldTitle({ kind: 'directory', tasks: ['nightly-deps'], asked: '' })).toBe('nightly-deps wants to start in');
    expect(heldTitle({ kind: 'directory', tasks: ['a', 'b', 'c'], asked: '' })).toBe('a, b and c want to start in');
    expect(heldTitle({ kind: 'paused_task', tasks: ['t'], asked: 'task t paused itself: 5 failures' })).toBe('task t paused itself: 5 failures');
    expect(heldReason('2 held run(s) of a, b: /x is not inside a workspace root')).toBe('/x is not inside a workspace root');
    expect(heldReason('something else')).toBe('something else');
    expect(heldReason('1 held run(s) of t: /x is not a known place (not inside a workspace root): authorize it with `airlock authorize /x`')).toBe(
      '/x is not a known place (not inside a workspace root)',
    );
    expect(summaryText({ tool: 'bash', summary: 'bash git push --force' })).toBe('git push --force');
    expect(summaryText({ tool: 'bash', summary: 'run it' })).toBe('run it');
  });
});

describe('PopupQueue', () => {
  const p = (id: string, created_at: string) => ({ id, created_at });
  it('raises the oldest first, keeps aside what the person put aside, and brings a reviewed one to the front', () => {
    const q = new PopupQueue();
    const pending = [p('b', '2026-01-01T10:02:00Z'), p('a', '2026-01-01T10:01:00Z'), p('c', '2026-01-01T10:03:00Z')];
    expect(q.queue(pending).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    q.putAside(['a', 'b', 'c']);
    expect(q.queue(pending)).toEqual([]);
    // A new request is raised; the ones put aside stay aside.
    expect(q.queue([...pending, p('d', '2026-01-01T10:04:00Z')]).map((x) => x.id)).toEqual(['d']);
    q.review('b');
    expect(q.queue([...pending, p('d', '2026-01-01T10:04:00Z')]).map((x) => x.id)).toEqual(['b', 'd']);
    // Answered elsewhere: it simply leaves.
    expect(q.queue([p('d', '2026-01-01T10:04:00Z')]).map((x) => x.id)).toEqual(['d']);
  });
});

describe('coalesce', () => {
  it('runs once more after a burst, never concurrently', async () => {
    let running = 0;
    let max = 0;
    let calls = 0;
    let release: () => void = () => {};
    const f = coalesce(async () => {
      calls++;
      running++;
      max = Math.max(max, running);
      await new Promise<void>((r) => (release = r));
      running--;
    });
    const first = f();
    void f();
    void f();
    release();
    await new Promise((r) => setTimeout(r, 0));
    release();
    await first;
    expect(calls).toBe(2);
    expect(max).toBe(1);
  });
});
