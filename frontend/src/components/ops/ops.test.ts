import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { render, click, settle, unmountAll } from '../../test/render';
import DiffView from './DiffView.svelte';
import StepList from './StepList.svelte';
import TokenOnce from './TokenOnce.svelte';
import ApprovePanel from './ApprovePanel.svelte';
import RejectForm from './RejectForm.svelte';
import JournalTimeline from './JournalTimeline.svelte';
import VerifyEvidence from './VerifyEvidence.svelte';
import StageTimeline from './StageTimeline.svelte';
import OutputBlock from './OutputBlock.svelte';
import type { Approval, ApprovalPrompt, Journal, VerifyResult } from '../../lib/api-ops';

afterEach(() => {
  unmountAll();
  vi.unstubAllGlobals();
});

const text = (el: Element) => el.textContent!.replace(/\s+/g, ' ').trim();

describe('DiffView', () => {
  const ctx = Array.from({ length: 30 }, (_, i) => ` unchanged ${i}`);
  const diff = ['--- app.conf', '+++ new.conf', '@@ -1,32 +1,32 @@', '-port=80', '+port=8080', ...ctx, '+tail=1', ''].join('\n');

  it('colours added and removed lines, counts them, and folds long unchanged runs until opened', () => {
    const el = render(DiffView, { content: diff, source: 'diff -u app.conf new.conf', sha256: 'ab'.repeat(32) });
    expect(el.querySelectorAll('.l.add')).toHaveLength(2);
    expect(el.querySelectorAll('.l.del')).toHaveLength(1);
    expect(text(el.querySelector('.stats')!)).toBe('+2 −1');
    const fold = el.querySelector('button.fold')!;
    expect(text(fold)).toBe('⋯ 24 unchanged lines');
    expect(text(el)).not.toContain('unchanged 10');
    click(fold);
    expect(text(el)).toContain('unchanged 10');
    expect(el.querySelector('button.fold')).toBeNull();
  });

  it('shows other output as folded text', () => {
    const plan = Array.from({ length: 60 }, (_, i) => `  # resource ${i}`).join('\n');
    const el = render(DiffView, { content: plan, source: 'terraform show', sha256: 'cd'.repeat(32) });
    expect(el.querySelector('.diff')).toBeNull();
    expect(text(el.querySelector('button.more')!)).toBe('Show 20 more lines');
  });
});

describe('StepList', () => {
  it('lists the most dangerous step first, with its words and its number in the plan', () => {
    const el = render(StepList, {
      steps: [
        { description: 'add index', effect: 'add index', reversibility: 'reversible', blast_radius: 'low' },
        { description: 'drop table', effect: 'drop table', reversibility: 'irreversible', blast_radius: 'high', rollback: 'restore the backup' },
      ],
    });
    const steps = [...el.querySelectorAll('li.step')];
    expect(steps.map((s) => s.getAttribute('data-step'))).toEqual(['2', '1']);
    expect(text(steps[0]!)).toContain('cannot be undone');
    expect(text(steps[0]!)).toContain('large blast radius');
    expect(text(steps[0]!)).toContain('rollback: restore the backup');
  });
});

const approval = (over: Partial<Approval> = {}): Approval =>
  ({ plan_id: 'op-1', plan_hash: 'd802596c'.repeat(8), token: 'M16lyQKrP84_eyKaFH-6KCXzojLQrvWSFlHSc-MSvwg', expires_at: new Date(Date.now() + 600_000).toISOString(), diff_sha256: 'x', ...over }) as Approval;

describe('TokenOnce', () => {
  it('shows the token with a warning that it will not be shown again, and copies it', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { clipboard: { writeText } });
    const onapply = vi.fn();
    const ondismiss = vi.fn();
    const el = render(TokenOnce, { approval: approval(), canApply: true, onapply, ondismiss, clipboard: vi.fn() });
    expect(text(el.querySelector('[data-testid="token-value"]')!)).toBe('M16lyQKrP84_eyKaFH-6KCXzojLQrvWSFlHSc-MSvwg');
    expect(text(el)).toContain('It will not be shown again');
    click(el.querySelector('[data-action="copy-token"]'));
    await settle();
    expect(writeText).toHaveBeenCalledWith('M16lyQKrP84_eyKaFH-6KCXzojLQrvWSFlHSc-MSvwg');
    expect(text(el.querySelector('[data-action="copy-token"]')!)).toBe('Copied');
    click(el.querySelector('[data-action="apply-now"]'));
    expect(onapply).toHaveBeenCalledWith('M16lyQKrP84_eyKaFH-6KCXzojLQrvWSFlHSc-MSvwg');
    click(el.querySelector('[data-action="hide-token"]'));
    expect(ondismiss).toHaveBeenCalled();
  });

  it('says so when no clipboard accepts it, and offers no apply when the plan cannot be applied', async () => {
    vi.stubGlobal('navigator', {});
    const el = render(TokenOnce, { approval: approval(), canApply: false, onapply: vi.fn(), ondismiss: vi.fn(), clipboard: vi.fn().mockResolvedValue(false) });
    expect(el.querySelector('[data-action="apply-now"]')).toBeNull();
    click(el.querySelector('[data-action="copy-token"]'));
    await settle();
    expect(text(el.querySelector('[role="alert"]')!)).toMatch(/copy it by hand/);
  });
});

const prompt = (): ApprovalPrompt =>
  ({
    plan_id: 'op-1', hash: 'd802596c'.repeat(8), status: 'diffed', target: { provider: 'file' }, intent: 'x', apply_command: 'cp new.conf app.conf',
    workdir: '/var/tmp/w', network: false, steps: [], verify: [], worst_blast_radius: 'med', worst_reversibility: 'irreversible',
  }) as unknown as ApprovalPrompt;

describe('ApprovePanel', () => {
  it("shows a commit-confirm plan's confirm step before approving", async () => {
    const p = { ...prompt(), confirm_command: './fakevyos confirm', confirm_within_seconds: 300 } as ApprovalPrompt;
    const el = render(ApprovePanel, { onprompt: vi.fn().mockResolvedValue(p), onapprove: vi.fn() });
    click(el.querySelector('[data-action="approve"]'));
    await settle();
    const row = text(el.querySelector('[data-testid="approve-confirm-step"]')!);
    expect(row).toContain('./fakevyos confirm');
    expect(row).toContain('within 300s');
    expect(row).toContain('the device rolls back by itself');
  });
  it('shows the full hash and the exact command before approving, and approves that hash', async () => {
    const onapprove = vi.fn().mockResolvedValue(undefined);
    const el = render(ApprovePanel, { onprompt: vi.fn().mockResolvedValue(prompt()), onapprove });
    expect(el.querySelector('[data-action="approve-confirm"]')).toBeNull();
    click(el.querySelector('[data-action="approve"]'));
    await settle();
    expect(text(el.querySelector('[data-testid="approve-hash"]')!)).toBe('d802596c'.repeat(8));
    expect(text(el)).toContain('cp new.conf app.conf');
    expect(text(el)).toContain('cannot be undone');
    expect(el.querySelector('[data-testid="approve-confirm-step"]')).toBeNull();
    click(el.querySelector('[data-action="approve-confirm"]'));
    await settle();
    expect(onapprove).toHaveBeenCalledWith('d802596c'.repeat(8), '10m');
  });

  it('shows why a plan cannot be approved', async () => {
    const el = render(ApprovePanel, { onprompt: vi.fn().mockRejectedValue('input new.conf changed since the diff was attached'), onapprove: vi.fn() });
    click(el.querySelector('[data-action="approve"]'));
    await settle();
    expect(text(el.querySelector('[role="alert"]')!)).toBe('input new.conf changed since the diff was attached');
    expect(el.querySelector('[data-action="approve-confirm"]')).toBeNull();
  });
});

describe('RejectForm', () => {
  it('needs a reason', async () => {
    const onreject = vi.fn().mockResolvedValue(undefined);
    const el = render(RejectForm, { onreject });
    click(el.querySelector('[data-action="reject"]'));
    const submit = el.querySelector<HTMLButtonElement>('[data-action="reject-confirm"]')!;
    expect(submit.disabled).toBe(true);
    const area = el.querySelector('textarea')!;
    area.value = ' wrong window ';
    area.dispatchEvent(new Event('input'));
    flushSync();
    expect(submit.disabled).toBe(false);
    click(submit);
    await settle();
    expect(onreject).toHaveBeenCalledWith('wrong window');
  });
});

const journal = (over: Partial<Journal> = {}): Journal =>
  ({
    project: 'dir:/var/tmp/w',
    entries: [
      { seq: 1, id: 1, plan_id: 'op-1', event: 'planned', at: '2026-11-29T10:00:00Z', hash: 'a'.repeat(64), prev_hash: '', detail: { hash: 'd802596c1d46aaaa' } },
      { seq: 2, id: 2, plan_id: 'op-1', event: 'approved', actor: 'window', at: '2026-11-29T10:01:00Z', hash: 'b'.repeat(64), prev_hash: 'a'.repeat(64), detail: { ttl: '10m0s' } },
    ],
    verification: { project: 'dir:/var/tmp/w', entries: 2, last_seq: 2, ok: true },
    ...over,
  }) as Journal;

describe('JournalTimeline', () => {
  it('lists entries newest first with what, who and hash, under an intact chain', () => {
    const el = render(JournalTimeline, { journal: journal(), plan: 'op-1' });
    expect([...el.querySelectorAll('li.entry')].map((e) => e.getAttribute('data-seq'))).toEqual(['2', '1']);
    const first = el.querySelector('li.entry')!;
    expect(text(first)).toContain('Approved');
    expect(text(first)).toContain('by window');
    expect(text(first)).toContain('#bbbbbbbbbbbb');
    expect(el.querySelector('[data-testid="chain-state"]')!.getAttribute('data-state')).toBe('intact');
    expect(text(el.querySelector('[data-testid="chain-state"]')!)).toContain('Chain intact');
  });

  it('says where the chain broke and marks that entry', () => {
    const el = render(JournalTimeline, {
      journal: journal({ verification: { project: 'p', entries: 2, last_seq: 2, ok: false, problems: [{ kind: 'edited', seq: 2, id: 2, detail: '' }] } as Journal['verification'] }),
    });
    const chain = el.querySelector('[data-testid="chain-state"]')!;
    expect(chain.getAttribute('role')).toBe('alert');
    expect(text(chain)).toContain('Chain broken at entry 2');
    expect(text(chain)).toContain('entry 2: changed after it was written');
    expect(el.querySelector('li.entry.broken')!.getAttribute('data-seq')).toBe('2');
  });

  it('never calls an unchecked chain intact', () => {
    const el = render(JournalTimeline, { journal: journal({ verification: undefined, verify_error: 'keyring locked' }) });
    expect(el.querySelector('[data-testid="chain-state"]')!.getAttribute('data-state')).toBe('unchecked');
    expect(text(el)).toContain('keyring locked');
  });
});

describe('VerifyEvidence', () => {
  it('shows each assertion with pass or fail, what it expected and its output', () => {
    const result = {
      plan_id: 'op-1',
      status: 'verify_failed',
      assertions: [
        { index: 0, name: 'port', command: 'grep port= app.conf', passed: true, exit_code: 0, want_exit: 0, expect_text: 'port=8080', output: 'port=8080\n', sha256: 'x' },
        { index: 1, name: 'name', command: 'grep name= app.conf', passed: false, exit_code: 1, want_exit: 0, output: '', sha256: 'y', reason: 'exit status 1, expected 0' },
      ],
    } as VerifyResult;
    const el = render(VerifyEvidence, { result });
    expect(text(el.querySelector('[data-testid="verify-summary"]')!)).toBe('verification failed 1 of 2 assertions passed');
    const rows = [...el.querySelectorAll('li.assertion')];
    expect(rows.map((r) => r.getAttribute('data-passed'))).toEqual(['true', 'false']);
    expect(text(rows[0]!)).toContain('output containing port=8080');
    expect(text(rows[1]!)).toContain('exit status 1, expected 0');
    expect(el.querySelector('[data-testid="verify-confirm"]')).toBeNull();
  });
  it("shows a commit-confirm plan's confirm: sent, or withheld with the reason", () => {
    const base = { plan_id: 'op-1', assertions: [] };
    let el = render(VerifyEvidence, {
      result: { ...base, status: 'verified', confirm: { outcome: 'confirmed', command: './fakevyos confirm', exit_code: 0, output: 'commit confirmed\n' } } as unknown as VerifyResult,
    });
    let row = el.querySelector('[data-testid="verify-confirm"]')!;
    expect(row.getAttribute('data-outcome')).toBe('confirmed');
    expect(text(row)).toContain('the device keeps the change');
    expect(text(el)).toContain('commit confirmed');
    unmountAll();
    el = render(VerifyEvidence, {
      result: {
        ...base,
        status: 'verify_failed',
        confirm: { outcome: 'confirm_withheld', command: './fakevyos confirm', exit_code: -1, reason: 'an assertion failed: nothing was sent' },
      } as unknown as VerifyResult,
    });
    row = el.querySelector('[data-testid="verify-confirm"]')!;
    expect(text(row)).toContain('confirm withheld');
    expect(text(row)).toContain('an assertion failed: nothing was sent');
  });
});

describe('StageTimeline and OutputBlock', () => {
  it('marks where the plan stands', () => {
    const el = render(StageTimeline, { status: 'applying' });
    expect(el.querySelector('[data-stage="apply"]')!.getAttribute('data-state')).toBe('running');
    expect(el.querySelector('[data-stage="approve"]')!.getAttribute('data-state')).toBe('done');
  });
  it('folds long output and unfolds on request', () => {
    const el = render(OutputBlock, { text: Array.from({ length: 15 }, (_, i) => `line ${i}`).join('\n'), lines: 5 });
    expect(text(el.querySelector('pre')!)).not.toContain('line 9');
    click(el.querySelector('button.more'));
    expect(text(el.querySelector('pre')!)).toContain('line 14');
  });
});
