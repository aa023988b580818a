// Components of the Dispatch and Departments pages, mounted in jsdom with the façade and
// the event stream replaced (the e2e drives the real ones).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { render, click, settle, unmountAll } from '../../test/render';
import type { DepartmentRow, TaskRow } from '../../lib/api-dispatch';

const handlers = new Map<string, ((payload: unknown) => void)[]>();
vi.mock('../../lib/events', () => ({
  Topics: { RunLog: 'run.log', RunUpdated: 'run.updated', TaskUpdated: 'task.updated', DepartmentUpdated: 'department.updated' },
  events: {
    on: (topic: string, h: (payload: unknown) => void) => {
      handlers.set(topic, [...(handlers.get(topic) ?? []), h]);
      return () => handlers.set(topic, (handlers.get(topic) ?? []).filter((x) => x !== h));
    },
    onGap: () => () => {},
  },
}));

const api = {
  createTask: vi.fn(),
  editTask: vi.fn(),
  schedulePreview: vi.fn(async () => ({ valid: true, description: 'every day at 02:00, UTC', next: ['2026-12-01T02:00:00Z'] })),
  runLog: vi.fn(),
  runNetwork: vi.fn(),
  runDecisions: vi.fn(async () => []),
  run: vi.fn(),
  chooseDirectory: vi.fn(async () => {
    throw new Error('the directory picker needs the Airlock window; type the path instead');
  }),
  setDepartmentDefaults: vi.fn(async () => ({})),
  removeDepartment: vi.fn(async () => {}),
  departments: vi.fn(async (): Promise<DepartmentRow[]> => []),
  home: vi.fn(async () => '/home/ana'),
};
vi.mock('../../lib/api-dispatch', () => ({ dispatchApi: api, onTaskRemoved: () => () => {} }));

const { default: TaskItem } = await import('./TaskItem.svelte');
const { default: TaskEditor } = await import('./TaskEditor.svelte');
const { default: LogViewer } = await import('./LogViewer.svelte');
const { default: RunNetwork } = await import('./RunNetwork.svelte');
const { default: RunDecisions } = await import('./RunDecisions.svelte');
const { default: RunDetail } = await import('./RunDetail.svelte');
const { default: DepartmentItem } = await import('../departments/DepartmentItem.svelte');

function type(el: Element | null, value: string): void {
  const input = el as HTMLInputElement;
  input.value = value;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}

beforeEach(() => {
  handlers.clear();
  vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => setTimeout(() => f(0), 0) as unknown as number);
  vi.stubGlobal('cancelAnimationFrame', (id: number) => clearTimeout(id));
});
afterEach(() => {
  unmountAll();
  vi.clearAllMocks();
});

const task = (over: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: 1, name: 'nightly', argv: ['sh', '-c', 'echo hi'], cwd: '/home/ana/code', schedule: '0 2 * * *', time_zone: 'UTC', department: '',
    overrides: {}, timeout: 0, no_progress_timeout: 0, overlap: 'skip', missed: 'skip', enabled: true, hold_deadline: 0, paused: false,
    consecutive_failures: 0, created_at: '', updated_at: '', description: 'every day at 02:00, UTC', next_runs: ['2026-12-01T02:00:00Z'],
    effective: { sandbox_mode: 'workspace-write', network: false, approval_policy: 'on-request', backend: 'auto', execution_mode: 'local' },
    warnings: [], ...over,
  }) as unknown as TaskRow;

const noop = async () => {};

describe('TaskItem', () => {
  const props = (t: TaskRow, over: Record<string, unknown> = {}) => ({ task: t, home: '/home/ana', onrunnow: noop, onedit: () => {}, onruns: () => {}, ontoggle: noop, onremove: noop, ...over });

  it('shows the schedule in words, the directory with ~, the badges, and red warnings', () => {
    const el = render(TaskItem, props(task({ warnings: ['Full access with approval never: every run may change anything.'] })));
    expect(el.querySelector('[data-testid="task-schedule"]')?.textContent).toBe('every day at 02:00, UTC');
    expect(el.textContent).toContain('~/code');
    expect(el.querySelector('[data-mode="workspace-write"]')).not.toBeNull();
    expect(el.querySelector('[data-warning]')?.textContent).toContain('Full access with approval never');
    expect(el.textContent).toContain('never ran');
  });

  it('removes only after the confirmation', async () => {
    const onremove = vi.fn(noop);
    const el = render(TaskItem, props(task(), { onremove }));
    click(el.querySelector('[data-action="remove"]'));
    expect(onremove).not.toHaveBeenCalled();
    expect(el.textContent).toContain('Its run history stays');
    click(el.querySelector('[data-action="confirm-remove"]'));
    expect(onremove).toHaveBeenCalledWith('nightly');
  });

  it('shows why run-now was refused', async () => {
    const el = render(TaskItem, props(task(), { onrunnow: async () => Promise.reject(new Error('a run of this task is still active')) }));
    click(el.querySelector('[data-action="run-now"]'));
    await settle();
    expect(el.querySelector('[role="alert"]')?.textContent).toBe('a run of this task is still active');
  });

  it('clears a pause by enabling the task', () => {
    const ontoggle = vi.fn(noop);
    const el = render(TaskItem, props(task({ paused: true, consecutive_failures: 5 }), { ontoggle }));
    expect(el.textContent).toContain('Paused after 5 failures in a row.');
    click(el.querySelector('[data-action="unpause"]'));
    expect(ontoggle).toHaveBeenCalledWith('nightly', true);
  });

  it('says a disabled or paused task is so', () => {
    const el = render(TaskItem, props(task({ enabled: false, paused: true, consecutive_failures: 5, pause_reason: 'failed 5 times in a row.' })));
    expect(el.textContent).toContain('disabled');
    expect(el.textContent).toContain('paused after 5 failures');
    expect(el.textContent).toContain('failed 5 times in a row.');
    expect(el.textContent).not.toContain('next');
  });
});

describe('TaskEditor', () => {
  const depts = [{ name: 'ops', directory: '/srv/ops', status: 'ok', defaults: { sandbox_mode: 'full-access', approval_policy: 'never' }, tasks: [] }] as unknown as DepartmentRow[];
  const props = (over: Record<string, unknown> = {}) => ({ departments: depts, home: '/home/ana', onsaved: vi.fn(), oncancel: vi.fn(), ...over });

  it('shows the core error by the field that caused it', async () => {
    api.createTask.mockRejectedValueOnce('task x: working directory "rel" is not absolute: give a full path');
    const el = render(TaskEditor, props());
    type(el.querySelector('#task-name'), 'x');
    type(el.querySelector('#task-command'), 'true');
    type(el.querySelector('#task-cwd'), 'rel');
    (el.querySelector('form') as HTMLFormElement).requestSubmit();
    await settle();
    expect(el.querySelector('[data-field-error="cwd"]')?.textContent).toContain('is not absolute');
    expect(el.querySelector('#task-cwd')?.getAttribute('aria-invalid')).toBe('true');
    expect(el.querySelector('.error-banner')).toBeNull();
  });

  it('sends the command as exact words and says what it runs', async () => {
    api.createTask.mockResolvedValueOnce(task());
    const p = props();
    const el = render(TaskEditor, p);
    type(el.querySelector('#task-name'), 'x');
    type(el.querySelector('#task-command'), `sh -c 'echo "a b"'`);
    type(el.querySelector('#task-cwd'), '/srv');
    expect([...el.querySelectorAll('code.word')].map((c) => c.textContent)).toEqual(['sh', '-c', 'echo "a b"']);
    (el.querySelector('form') as HTMLFormElement).requestSubmit();
    await settle();
    expect(api.createTask).toHaveBeenCalledWith(expect.objectContaining({ name: 'x', argv: ['sh', '-c', 'echo "a b"'], cwd: '/srv', secrets: [], disabled: false }));
    expect(p.onsaved).toHaveBeenCalled();
  });

  it('warns live when the department makes it full access with never, and when it runs in home', () => {
    const el = render(TaskEditor, props());
    expect(el.querySelectorAll('[data-warning]').length).toBe(0);
    const sel = el.querySelector('#task-department') as HTMLSelectElement;
    sel.value = 'ops';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    expect(el.querySelector('[data-warning]')?.textContent).toContain('Full access with approval never');
    expect((el.querySelector('#task-ov-mode option[value=""]') as HTMLOptionElement).textContent).toBe('inherit: full-access (department ops)');
    expect((el.querySelector('#task-ov-network option[value=""]') as HTMLOptionElement).textContent).toBe('inherit from department ops');
    type(el.querySelector('#task-cwd'), '/home/ana');
    expect(el.querySelectorAll('[data-warning]').length).toBe(2);
  });

  it('offers the three network choices and sends the chosen one', async () => {
    api.createTask.mockResolvedValueOnce(task());
    const el = render(TaskEditor, props());
    const net = el.querySelector('#task-ov-network') as HTMLSelectElement;
    expect([...net.options].map((o) => o.value)).toEqual(['', 'off', 'allowlist', 'on']);
    expect(net.querySelector('option[value="allowlist"]')!.textContent).toContain("only the allowed domains, through Airlock's egress proxy");
    net.value = 'allowlist';
    net.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    type(el.querySelector('#task-name'), 'x');
    type(el.querySelector('#task-command'), 'true');
    type(el.querySelector('#task-cwd'), '/srv');
    (el.querySelector('form') as HTMLFormElement).requestSubmit();
    await settle();
    expect(api.createTask).toHaveBeenCalledWith(expect.objectContaining({ overrides: expect.objectContaining({ network: 'allowlist' }) }));
  });

  it('keeps the directory typeable when the picker cannot open', async () => {
    const el = render(TaskEditor, props());
    click(el.querySelector('[data-action="browse"]'));
    await settle();
    expect(el.textContent).toContain('type the path instead');
  });

  it('shows the live preview of the schedule', async () => {
    const el = render(TaskEditor, props());
    await new Promise((r) => setTimeout(r, 200));
    await settle();
    expect(api.schedulePreview).toHaveBeenCalledWith('0 2 * * *', expect.any(String));
    expect(el.querySelector('[data-testid="schedule-preview"] .words')?.textContent).toBe('every day at 02:00, UTC');
  });
});

describe('LogViewer', () => {
  it('shows the tail, drops chunks the file already had, and appends live ones of its run only', async () => {
    let answer: (v: unknown) => void = () => {};
    api.runLog.mockReturnValueOnce(new Promise((ok) => (answer = ok)));
    const el = render(LogViewer, { runId: 7, live: true });
    const emit = (p: unknown) => (handlers.get('run.log') ?? []).forEach((h) => h(p));
    emit({ run_id: 7, task_id: 1, chunk: 'two\n' }); // arrives while the tail is read
    answer({ run_id: 7, start: 0, end: 8, size: 8, data: 'one\ntwo\n', truncated: false });
    await settle();
    emit({ run_id: 7, task_id: 1, chunk: 'three\n' });
    emit({ run_id: 8, task_id: 2, chunk: 'other run\n' });
    await settle();
    expect(el.querySelector('[data-testid="run-log"]')?.textContent).toBe('one\ntwo\nthree\n');
    expect(el.querySelector('[data-testid="log-live"]')).not.toBeNull();
    expect(api.runLog).toHaveBeenCalledWith(7, -1, 256 * 1024);
  });

  it('says why there is no log', async () => {
    api.runLog.mockResolvedValueOnce({ run_id: 3, start: 0, end: 0, size: 0, data: '', truncated: false, missing: 'this run has no log: it never started' });
    const el = render(LogViewer, { runId: 3, live: false });
    await settle();
    expect(el.querySelector('[data-testid="run-log"]')?.textContent).toBe('this run has no log: it never started');
  });

  it('offers the earlier part of a long log', async () => {
    api.runLog.mockResolvedValueOnce({ run_id: 4, start: 5000, end: 6000, size: 6000, data: 'tail\n', truncated: true });
    const el = render(LogViewer, { runId: 4, live: false });
    await settle();
    expect(el.textContent).toContain('Load earlier (4.9 KiB before)');
    expect(el.textContent).toContain('size cap');
  });
});

describe('RunDecisions', () => {
  const decision = (over: Record<string, unknown>) => ({
    id: 1, request_id: 'r1', tool: 'bash', subject: 'make', tier: 'P1', verdict: 'allow', layer: 'person', kind: '', interactive_only: false,
    reasons: '[]', rule: '', session: '', run: '9', task: 'agent', department: '', cwd: '/w', asked_by: 'hook:claude', answered_by: 'window',
    waited_ms: 0, created_at: '2026-12-01T10:00:00Z', ...over,
  });

  it('says who answered, that nobody did, and whether each call ran', async () => {
    api.runDecisions.mockResolvedValueOnce([
      decision({ id: 3, request_id: 'r3', subject: 'rm -rf build', verdict: 'deny', layer: 'policy', answered_by: 'expired' }),
      decision({ id: 2, request_id: 'r2', subject: 'touch a', verdict: 'ask', layer: 'policy', answered_by: 'handed-over', ran: 'ran' }),
      decision({ id: 1, request_id: 'r1', ran: 'failed', ran_error: 'exit status 2' }),
    ] as never);
    const el = render(RunDecisions, { runId: 9, status: 'succeeded', live: false });
    await settle();
    expect(api.runDecisions).toHaveBeenCalledWith(9);
    const cell = (id: string, what: string) => el.querySelector(`tr[data-decision="${id}"] [data-${what}]`)!.textContent!.trim();
    expect(cell('r3', 'answered')).toBe('expired: nobody answered before its deadline');
    expect(cell('r3', 'ran')).toBe('');
    expect(cell('r2', 'verdict')).toBe('ask');
    expect(cell('r2', 'answered')).toContain("handed to the agent's own prompt");
    expect(cell('r2', 'ran')).toBe('ran');
    expect(cell('r1', 'answered')).toBe('by window');
    expect(cell('r1', 'ran')).toBe('failed: exit status 2');
  });

  it('says when a run asked nothing', async () => {
    api.runDecisions.mockResolvedValueOnce([]);
    const el = render(RunDecisions, { runId: 5, status: 'succeeded', live: false });
    await settle();
    expect(el.querySelector('[data-testid="run-decisions-empty"]')!.textContent).toContain('asked Airlock nothing');
  });
});

describe('RunNetwork', () => {
  const traffic = (over: Record<string, unknown>) => ({
    ports: [443], connections: 1, allowed: 1, refused: 0, asked: 0, bytes_up: 0, bytes_down: 0, duration_ms: 0, last_reason: 'allowed by allowed_domains', ...over,
  });

  it('shows each domain with its ports, verdicts, bytes and time, and marks refused ones', async () => {
    api.runNetwork.mockResolvedValueOnce({
      run_id: 9,
      domains: [
        traffic({ domain: 'api.example.com', connections: 3, allowed: 3, bytes_up: 1200, bytes_down: 48000, duration_ms: 2400 }),
        traffic({ domain: 'localhost', ports: [8080], allowed: 1, asked: 1, last_reason: 'allowed by the person' }),
        traffic({ domain: 'tracker.test', ports: [80, 443], connections: 2, allowed: 0, refused: 2, asked: 1, last_reason: 'denied by the person' }),
      ],
    });
    const el = render(RunNetwork, { runId: 9, status: 'succeeded', live: false });
    await settle();
    expect(api.runNetwork).toHaveBeenCalledWith(9);
    const row = (d: string) => el.querySelector(`tr[data-domain="${d}"]`)!;
    expect(row('api.example.com').textContent).toContain('443');
    expect(row('api.example.com').querySelector('[data-verdicts]')!.textContent!.trim()).toBe('3 allowed');
    expect(row('api.example.com').textContent).toContain('1.2 KB');
    expect(row('api.example.com').textContent).toContain('48.0 KB');
    expect(row('api.example.com').textContent).toContain('2.4 s');
    expect(row('api.example.com').classList.contains('refused')).toBe(false);
    expect(row('localhost').querySelector('[data-verdicts]')!.textContent!.trim()).toBe('1 allowed, asked you');
    const refused = row('tracker.test');
    expect(refused.classList.contains('refused')).toBe(true);
    expect(refused.querySelector('[aria-label="refused"]')).not.toBeNull();
    expect(refused.textContent).toContain('80, 443');
    expect(refused.querySelector('[data-verdicts]')!.textContent).toContain('2 refused, 1 asked you');
    expect(refused.querySelector('[data-verdicts]')!.textContent).toContain('denied by the person');
    expect(el.querySelector('[data-testid="refused-count"]')!.textContent).toBe('1 domain refused');
  });

  it('says when a run connected nowhere', async () => {
    api.runNetwork.mockResolvedValue({ run_id: 5, domains: [] });
    const el = render(RunNetwork, { runId: 5, status: 'succeeded', live: false });
    await settle();
    expect(el.querySelector('[data-testid="run-network-empty"]')!.textContent).toContain('made no connection');
    expect(el.querySelector('[data-testid="refused-count"]')).toBeNull();
  });

  it('is in the run view of an allowlist run only', async () => {
    const r = (network: string) => ({ id: 11, task_id: 1, task_name: 'fetch', status: 'succeeded', trigger: 'manual', cwd: '/home/ana/w', scheduled_at: '2026-12-01T10:00:00Z',
      policy: { sandbox_mode: 'workspace-write', network, approval_policy: 'on-request', backend: 'auto', execution_mode: 'local' } });
    api.runLog.mockResolvedValue({ run_id: 11, start: 0, end: 0, size: 0, data: '', truncated: false });
    api.runNetwork.mockResolvedValue({ run_id: 11, domains: [traffic({ domain: 'pypi.org' })] });
    api.run.mockResolvedValueOnce(r('allowlist'));
    const el = render(RunDetail, { runId: 11, home: '/home/ana', onback: () => {} });
    await settle();
    expect(el.querySelector('[data-testid="run-network"] tr[data-domain="pypi.org"]')).not.toBeNull();
    unmountAll();
    api.run.mockResolvedValueOnce(r('off'));
    const off = render(RunDetail, { runId: 11, home: '/home/ana', onback: () => {} });
    await settle();
    expect(off.querySelector('[data-testid="run-network"]')).toBeNull();
  });
});

describe('DepartmentItem', () => {
  const dept = (over: Partial<DepartmentRow> = {}): DepartmentRow =>
    ({ id: 1, name: 'platform', directory: '/home/ana/code/platform', defaults: { sandbox_mode: 'read-only' }, status: 'ok', tasks: ['nightly'], ...over }) as unknown as DepartmentRow;

  it('shows a missing directory and what it holds', () => {
    const el = render(DepartmentItem, { dept: dept({ status: 'missing', status_reason: 'the directory was removed' }), home: '/home/ana', onchanged: noop });
    expect(el.querySelector('[data-testid="dept-missing"]')).not.toBeNull();
    expect(el.textContent).toContain('the directory was removed');
    expect(el.textContent).toContain('wait under Waiting for you');
    expect(el.textContent).toContain('~/code/platform');
  });

  it('removes after a confirmation naming the tasks that will wait', async () => {
    const onchanged = vi.fn(noop);
    const el = render(DepartmentItem, { dept: dept(), home: '/home/ana', onchanged });
    click(el.querySelector('[data-action="remove"]'));
    expect(el.textContent).toContain('Its task (nightly) will wait');
    expect(api.removeDepartment).not.toHaveBeenCalled();
    click(el.querySelector('[data-action="confirm-remove"]'));
    await settle();
    expect(api.removeDepartment).toHaveBeenCalledWith('platform');
    expect(onchanged).toHaveBeenCalled();
  });

  it('edits the defaults, sending only what is set', async () => {
    const el = render(DepartmentItem, { dept: dept(), home: '/home/ana', onchanged: noop });
    click(el.querySelector('[data-action="edit-defaults"]'));
    const sel = el.querySelector('#dept-1-approval') as HTMLSelectElement;
    sel.value = 'never';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    click(el.querySelector('[data-action="save-defaults"]'));
    await settle();
    expect(api.setDepartmentDefaults).toHaveBeenCalledWith('platform', { sandbox_mode: 'read-only', approval_policy: 'never' });
  });

  it('marks full access with never in red', () => {
    const el = render(DepartmentItem, { dept: dept({ defaults: { sandbox_mode: 'full-access', approval_policy: 'never' } as never }), home: '/home/ana', onchanged: noop });
    expect(el.querySelector('[data-warning]')?.textContent).toContain('Full access with approval never');
  });
});

describe('Departments page', () => {
  const platform = { id: 1, name: 'platform', directory: '/home/ana/code/platform', defaults: {}, status: 'ok', tasks: [] } as unknown as DepartmentRow;
  const emit = (topic: string) => (handlers.get(topic) ?? []).forEach((h) => h({}));

  it('reads on mount, again on the events that change it, and says when a read fails', async () => {
    const { default: Departments } = await import('../../pages/Departments.svelte');
    api.departments.mockResolvedValueOnce([platform]);
    const el = render(Departments, {});
    await settle();
    expect(el.textContent).toContain('1 department');
    expect(el.querySelector('[role="alert"]')).toBeNull();

    api.departments.mockRejectedValueOnce(new Error('the core is not running'));
    emit('department.updated');
    await settle();
    expect(el.querySelector('[role="alert"]')?.textContent).toContain('the core is not running');

    api.departments.mockResolvedValueOnce([]);
    emit('task.updated');
    await settle();
    expect(el.querySelector('[role="alert"]')).toBeNull();
    expect(el.textContent).toContain('No departments yet');
    expect(api.departments).toHaveBeenCalledTimes(3);
  });
});
