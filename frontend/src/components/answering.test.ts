import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, tick } from 'svelte';
import { render, click, settle, unmountAll } from '../test/render';
import PermissionPopup from './PermissionPopup.svelte';
import ApprovalRow from './ApprovalRow.svelte';
import HeldRow from './HeldRow.svelte';
import type { Approval, InboxItem } from '../lib/api';

afterEach(() => {
  unmountAll();
});

const p1 = (over: Partial<Approval> = {}): Approval =>
  ({
    id: 'w1', tool: 'write_file', summary: 'write ~/Airlock/research/notes.md', tier: 'P1', interactive_only: false, reasons: [],
    scopes: ['once', 'session', 'always'], params: '{\n  "path": "/home/ana/Airlock/research/notes.md"\n}', created_at: '2026-11-29T10:00:00Z',
    session: 'refactor', department: 'research', cwd: '/home/ana/Airlock/research', mode: 'workspace-write', network: false, ...over,
  }) as Approval;

const p2 = (over: Partial<Approval> = {}): Approval =>
  p1({ id: 'b1', tool: 'bash', tier: 'P2', kind: 'bash_destructive', interactive_only: true, scopes: ['once'], summary: 'git push --force origin main',
    reasons: ['data loss: rewrites the history of origin/main'], params: '{\n  "command": "git push --force origin main"\n}', network: 'on', ...over });

const buttons = (el: Element) => [...el.querySelectorAll('footer button, .answer button')].map((b) => b.textContent!.trim());
const key = (el: Element, k: string) => {
  el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  flushSync();
};

describe('PermissionPopup', () => {
  it('shows a P1 request with its context and queue position; Allow for this session is the default', async () => {
    const onanswer = vi.fn(async () => {});
    const el = render(PermissionPopup, { queue: [p1(), p2({ id: 'b2' }), p2({ id: 'b3' })], home: '/home/ana', onanswer, onaside: () => {} });
    const pop = el.querySelector('[role="alertdialog"]')!;
    expect(pop.getAttribute('data-request')).toBe('w1');
    expect(el.querySelector('[data-testid="popup-count"]')!.textContent).toBe('1 of 3');
    const text = pop.textContent!;
    for (const want of ['write_file', 'asks once', 'Write a file', 'agent session “refactor”', 'dept. research', '~/Airlock/research', 'workspace-write', 'network off', '"path"']) {
      expect(text).toContain(want);
    }
    // A P1 asks the first time, then is remembered for the session; once is
    // the exception beside it.
    expect(buttons(pop)).toEqual(['Later', 'Deny', 'Allow once', 'Allow for this session', 'Allow always ▾']);
    const session = pop.querySelector('[data-action="allow-session"]')!;
    expect(session.classList.contains('btn-primary')).toBe(true);
    expect(pop.querySelector('[data-action="allow-once"]')!.classList.contains('btn-primary')).toBe(false);
    expect(session.getAttribute('title')).toContain('until agent session “refactor” ends');
    await tick();
    await Promise.resolve();
    expect(document.activeElement?.getAttribute('data-action')).toBe('allow-session');
    // Enter on the default button allows for the session.
    (document.activeElement as HTMLElement).click();
    flushSync();
    expect(onanswer).toHaveBeenLastCalledWith('w1', true, 'session');
    await settle();
    // Allow always ▾ offers what the session button does not.
    click(pop.querySelector('[data-action="allow-always"]'));
    expect([...pop.querySelectorAll('[role="menuitem"]')].map((m) => m.getAttribute('data-scope'))).toEqual(['always']);
    click(pop.querySelector('[data-scope="always"]'));
    expect(onanswer).toHaveBeenLastCalledWith('w1', true, 'always');
    await settle();
    click(pop.querySelector('[data-action="allow-once"]'));
    expect(onanswer).toHaveBeenLastCalledWith('w1', true, 'once');
  });

  it('offers a scheduled run’s question for this task and for this department', async () => {
    const onanswer = vi.fn(async () => {});
    const q = p1({
      id: 'n1', tool: 'network_domain', summary: 'network_domain {"domain":"example.test","port":443}', session: undefined, run: '7', task: 'backup',
      department: 'research', scopes: ['once', 'session', 'task', 'department'], params: '{\n  "domain": "example.test",\n  "port": 443\n}',
    });
    const el = render(PermissionPopup, { queue: [q], home: '', onanswer, onaside: () => {} });
    const pop = el.querySelector('[role="alertdialog"]')!;
    expect(buttons(pop)).toEqual(['Later', 'Deny', 'Allow once', 'Allow always ▾']);
    click(pop.querySelector('[data-action="allow-always"]'));
    const items = [...pop.querySelectorAll('[role="menuitem"]')];
    expect(items.map((m) => m.getAttribute('data-scope'))).toEqual(['task', 'department']);
    expect(items.map((m) => m.querySelector('strong')!.textContent)).toEqual(['For this task', 'For this department']);
    expect(items[0]!.textContent).toContain('task backup and no other');
    expect(items[1]!.textContent).toContain('department research');
    click(pop.querySelector('[data-scope="task"]'));
    expect(onanswer).toHaveBeenLastCalledWith('n1', true, 'task');
  });

  it('keeps Allow once the default for a P1 with no session to remember it in', async () => {
    const onanswer = vi.fn(async () => {});
    const el = render(PermissionPopup, { queue: [p1({ session: undefined, run: '7', scopes: ['once', 'always'] })], home: '', onanswer, onaside: () => {} });
    const pop = el.querySelector('[role="alertdialog"]')!;
    expect(buttons(pop)).toEqual(['Later', 'Deny', 'Allow once', 'Allow always ▾']);
    expect(pop.querySelector('[data-action="allow-once"]')!.classList.contains('btn-primary')).toBe(true);
    await tick();
    await Promise.resolve();
    expect(document.activeElement?.getAttribute('data-action')).toBe('allow-once');
    const only = render(PermissionPopup, { queue: [p1({ id: 'w9', session: undefined, scopes: ['once'] })], home: '', onanswer, onaside: () => {} });
    expect(buttons(only.querySelector('[role="alertdialog"]')!)).toEqual(['Later', 'Deny', 'Allow once']);
  });

  it('offers a P2 credential read Allow once only, with Deny the default', async () => {
    const onanswer = vi.fn(async () => {});
    const read = p1({ id: 'k1', tool: 'bash', tier: 'P2', scopes: ['once'], summary: 'cat ~/.ssh/id_rsa', reasons: ['reads SSH keys (~/.ssh/id_rsa): cat ~/.ssh/id_rsa'] });
    const el = render(PermissionPopup, { queue: [read], home: '', onanswer, onaside: () => {} });
    const pop = el.querySelector('[role="alertdialog"]')!;
    expect(buttons(pop)).toEqual(['Later', 'Deny', 'Allow once']);
    expect(pop.querySelector('[data-action="allow-session"]')).toBeNull();
    expect(pop.textContent).toContain('reads SSH keys');
    await tick();
    await Promise.resolve();
    expect(document.activeElement?.getAttribute('data-action')).toBe('deny');
    click(pop.querySelector('[data-action="allow-once"]'));
    expect(onanswer).toHaveBeenCalledWith('k1', true, 'once');
  });

  it('offers a P2 no Allow always, makes Deny the default, and Enter never approves it', async () => {
    const onanswer = vi.fn(async () => {});
    const el = render(PermissionPopup, { queue: [p2()], home: '/home/ana', onanswer, onaside: () => {} });
    const pop = el.querySelector('[role="alertdialog"]')!;
    expect(buttons(pop)).toEqual(['Later', 'Deny', 'Allow once']);
    expect(el.querySelector('[data-testid="popup-count"]')).toBeNull();
    expect(pop.textContent).toContain('asks every time');
    expect(pop.textContent).toContain('Run a shell command that can destroy data');
    expect(pop.textContent).toContain('why: data loss');
    expect(pop.textContent).toContain('Only a person can allow this');
    await tick();
    await Promise.resolve();
    expect(document.activeElement?.getAttribute('data-action')).toBe('deny');
    const allow = pop.querySelector('[data-action="allow-once"]')!;
    const enter = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
    allow.dispatchEvent(enter);
    expect(enter.defaultPrevented).toBe(true);
    expect(onanswer).not.toHaveBeenCalled();
    click(pop.querySelector('[data-action="deny"]'));
    expect(onanswer).toHaveBeenCalledWith('b1', false, 'once');
  });

  it('says exactly what allowing an escalation gives, and that it is not remembered', () => {
    const esc = p2({ id: 'e1', tool: 'write_file', kind: 'isolation_escalation', summary: 'write_file /etc/hosts',
      gives: '/etc writable, for this one call', reasons: ['sandbox denied write of /etc/hosts: it is outside the writable roots'] });
    const el = render(PermissionPopup, { queue: [esc], home: '/home/ana', onanswer: async () => {}, onaside: () => {} });
    const gives = el.querySelector('[data-testid="popup-gives"]')!;
    expect(gives.textContent).toContain('/etc writable, for this one call');
    expect(gives.textContent).toContain('not remembered');
    expect(buttons(el)).not.toContain('Allow always ▾');
    // Other requests say nothing of it.
    const other = render(PermissionPopup, { queue: [p1({ id: 'w9' })], home: '/home/ana', onanswer: async () => {}, onaside: () => {} });
    expect(other.querySelector('[data-testid="popup-gives"]')).toBeNull();
  });

  it('Esc puts the queue aside without answering', () => {
    const onanswer = vi.fn(async () => {});
    const onaside = vi.fn();
    const el = render(PermissionPopup, { queue: [p1(), p2()], home: '', onanswer, onaside });
    key(el.querySelector('[role="alertdialog"]')!, 'Escape');
    expect(onaside).toHaveBeenCalledWith(['w1', 'b1']);
    expect(onanswer).not.toHaveBeenCalled();
  });

  it('folds long parameters and unfolds them on request', () => {
    const params = Array.from({ length: 30 }, (_, i) => `  "k${i}": ${i},`).join('\n');
    const el = render(PermissionPopup, { queue: [p1({ params })], home: '', onanswer: async () => {}, onaside: () => {} });
    const pre = () => el.querySelector('[data-testid="popup-params"]')!.textContent!;
    expect(pre()).not.toContain('k29');
    click([...el.querySelectorAll('button')].find((b) => b.textContent === '▸ more')!);
    expect(pre()).toContain('k29');
  });

  it('shows the core’s refusal and keeps the request', async () => {
    const el = render(PermissionPopup, {
      queue: [p2()], home: '', onaside: () => {},
      onanswer: async () => {
        throw new Error('P2 requests cannot be allowed from the tray');
      },
    });
    click(el.querySelector('[data-action="allow-once"]'));
    await tick();
    await Promise.resolve();
    flushSync();
    expect(el.querySelector('[role="alert"]')!.textContent).toContain('cannot be allowed');
  });

  it('shows nothing when nothing is queued', () => {
    const el = render(PermissionPopup, { queue: [], home: '', onanswer: async () => {}, onaside: () => {} });
    expect(el.querySelector('[role="alertdialog"]')).toBeNull();
  });
});

describe('ApprovalRow', () => {
  it('answers a P1 in place and opens the popup for a P2', async () => {
    const onanswer = vi.fn(async () => {});
    const onreview = vi.fn();
    const row = render(ApprovalRow, { approval: p1(), home: '', onanswer, onreview });
    click(row.querySelector('[data-action="allow-once"]'));
    expect(onanswer).toHaveBeenCalledWith('w1', true, 'once');
    await settle();
    expect(row.querySelector('[data-action="allow-session"]')!.classList.contains('btn-primary')).toBe(true);
    click(row.querySelector('[data-action="allow-session"]'));
    expect(onanswer).toHaveBeenLastCalledWith('w1', true, 'session');
    const row2 = render(ApprovalRow, { approval: p2(), home: '', onanswer, onreview });
    expect(row2.querySelector('[data-action="allow-once"]')).toBeNull();
    click(row2.querySelector('[data-action="review"]'));
    expect(onreview).toHaveBeenCalledWith('b1');
  });
});

describe('HeldRow', () => {
  const held = (over: Partial<InboxItem> = {}): InboxItem =>
    ({ kind: 'directory', key: 'dir:/var/tmp/legacy', dir: '/var/tmp/legacy', runs: [4, 5], tasks: ['nightly-deps'], since: '2026-11-29T02:00:00Z',
      asked: '2 held run(s) of nightly-deps: /var/tmp/legacy is not inside the workspace, a department, or an authorized place', answer: 'airlock authorize /var/tmp/legacy', actions: ['authorize', 'cancel'], ...over }) as InboxItem;

  it('says what becomes writable and authorizes after the confirmation', async () => {
    const onauthorize = vi.fn(async () => ({ path: '/var/tmp/legacy', released: [4, 5], needs_confirmation: false }));
    const el = render(HeldRow, { item: held(), home: '/home/ana', onauthorize });
    expect(el.textContent).toContain('nightly-deps wants to start in');
    expect(el.textContent).toContain('2 runs waiting here');
    expect(el.textContent).toContain('It would be able to write: /var/tmp/legacy (and below)');
    click(el.querySelector('[data-action="authorize"]'));
    expect(onauthorize).not.toHaveBeenCalled();
    expect(el.textContent).toContain('may write anywhere under it without asking');
    click(el.querySelector('[data-action="confirm-authorize"]'));
    expect(onauthorize).toHaveBeenCalledWith('/var/tmp/legacy', false);
  });

  it('asks the second confirmation for the home directory, in the core’s words', async () => {
    const onauthorize = vi.fn(async (_dir: string, confirm: boolean) =>
      confirm
        ? { path: '/home/ana', released: [1], needs_confirmation: false }
        : { path: '/home/ana', released: [], needs_confirmation: true, confirmation: 'authorizing /home/ana lets runs write to /home/ana/.ssh' },
    );
    const el = render(HeldRow, { item: held({ dir: '/home/ana', key: 'dir:/home/ana' }), home: '/home/ana', onauthorize });
    click(el.querySelector('[data-action="authorize"]'));
    click(el.querySelector('[data-action="confirm-authorize"]'));
    await tick();
    await Promise.resolve();
    flushSync();
    expect(el.querySelector('[data-testid="second-confirmation"]')!.textContent).toContain('/home/ana/.ssh');
    click(el.querySelector('[data-action="confirm-home"]'));
    expect(onauthorize).toHaveBeenLastCalledWith('/home/ana', true);
  });

  it('skips the held runs: cancels them, authorizes nothing', () => {
    const onauthorize = vi.fn();
    const oncancel = vi.fn(async () => {});
    const el = render(HeldRow, { item: held(), home: '', onauthorize, oncancel });
    const skip = el.querySelector('[data-action="skip"]')!;
    expect(skip.textContent!.trim()).toBe('Skip 2 runs');
    click(skip);
    expect(oncancel).toHaveBeenCalledWith([4, 5]);
    expect(onauthorize).not.toHaveBeenCalled();
  });

  it('gives the way to answer holds the window cannot answer yet', () => {
    const el = render(HeldRow, { item: held({ kind: 'paused_task', key: 'task:t', dir: undefined, asked: 'task t paused itself: 5 failures', answer: 'airlock task enable t' }), home: '', onauthorize: vi.fn() });
    expect(el.textContent).toContain('task t paused itself');
    expect(el.textContent).toContain('airlock task enable t');
    expect(el.querySelector('[data-action="authorize"]')).toBeNull();
  });
});
