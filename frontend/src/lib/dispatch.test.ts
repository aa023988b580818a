import { describe, expect, it, vi } from 'vitest';
import {
  atBottom,
  byteWords,
  canCancel,
  cleanDefaults,
  defaultsWords,
  durationText,
  durationWords,
  editorFromTask,
  editorWarnings,
  emptyEditor,
  errorField,
  formatEnv,
  isDangerous,
  joinCommand,
  layered,
  LogBuffer,
  looksLikeSecretValue,
  mergeTail,
  parseEnv,
  parseSecrets,
  runOutcome,
  missedSpan,
  splitCommand,
  statusTone,
  statusWords,
  toTaskForm,
  taskRuns,
} from './dispatch';
import type { Run, TaskRow } from './api-dispatch';

describe('splitCommand / joinCommand', () => {
  it.each([
    ['sh -c "echo hi; date"', ['sh', '-c', 'echo hi; date']],
    ["  git   commit -m 'a b'  ", ['git', 'commit', '-m', 'a b']],
    ['echo a\\ b "q\\"x" \'$HOME\'', ['echo', 'a b', 'q"x', '$HOME']],
    ['printf ""', ['printf', '']],
    ['', []],
    ['a"b"c', ['abc']],
  ])('%j → %j', (line, argv) => {
    expect(splitCommand(line)).toEqual({ argv });
  });

  it('refuses an unclosed quote with the way out', () => {
    expect(splitCommand('echo "oops').error).toMatch(/unclosed double quote/);
    expect(splitCommand("echo 'oops").error).toMatch(/unclosed single quote/);
  });

  it('round-trips any argv', () => {
    for (const argv of [['sh', '-c', "it's $HOME"], ['a b', '', '"q"', 'back\\slash'], ['/usr/bin/backup', '--full']]) {
      expect(splitCommand(joinCommand(argv)).argv).toEqual(argv);
    }
    expect(joinCommand(['/usr/bin/backup', '--full'])).toBe('/usr/bin/backup --full');
    expect(joinCommand(undefined)).toBe('');
  });
});

describe('env and secrets', () => {
  it('reads NAME=value lines, skipping blanks and comments', () => {
    expect(parseEnv('A=1\n\n# note\nB = two=2\n')).toEqual({ env: { A: '1', B: ' two=2' } });
  });
  it('names the bad line', () => {
    expect(parseEnv('A=1\nnovalue').error).toMatch(/line 2: write NAME=value/);
    expect(parseEnv('1X=3').error).toMatch(/line 1: 1X is not a valid variable name/);
  });
  it('formats sorted', () => {
    expect(formatEnv({ B: '2', A: '1' })).toBe('A=1\nB=2');
    expect(formatEnv(undefined)).toBe('');
  });
  it('reads secret names, deduplicated', () => {
    expect(parseSecrets('API_TOKEN, DB_PASS  API_TOKEN\n')).toEqual(['API_TOKEN', 'DB_PASS']);
    expect(parseSecrets('  ')).toEqual([]);
  });
  it('spots a pasted value', () => {
    expect(looksLikeSecretValue('ghp_a8Kd92jsLQm3nZ0pXXe')).toBe(true);
    expect(looksLikeSecretValue('GITHUB_TOKEN_FOR_RELEASES')).toBe(false);
    expect(looksLikeSecretValue('short')).toBe(false);
  });
});

describe('durations', () => {
  it.each([
    [0, ''],
    [undefined, ''],
    [30 * 60e9, '30m'],
    [90 * 60e9, '1h30m'],
    [45e9, '45s'],
    [1, '1s'],
  ])('%s ns → %j', (ns, text) => expect(durationText(ns)).toBe(text));
  it.each([
    [12_000, '12 s'],
    [60_000, '1 min'],
    [75_000, '1 min 15 s'],
    [3_600_000, '1 h'],
    [5_400_000, '1 h 30 min'],
    [-1, ''],
  ])('%d ms → %j', (ms, text) => expect(durationWords(ms)).toBe(text));
});

const row = (over: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: 1,
    name: 'nightly',
    argv: ['sh', '-c', 'echo hi'],
    cwd: '/srv/x',
    schedule: '0 2 * * *',
    time_zone: 'Europe/Madrid',
    department: 'ops',
    overrides: { sandbox_mode: 'read-only' },
    env: { A: '1' },
    secrets: ['TOKEN'],
    timeout: 30 * 60e9,
    no_progress_timeout: 0,
    overlap: 'queue',
    missed: 'run_once',
    enabled: false,
    hold_deadline: 24 * 3600e9,
    paused: false,
    consecutive_failures: 0,
    created_at: '',
    updated_at: '',
    description: 'every day at 02:00, Europe/Madrid',
    next_runs: [],
    effective: { sandbox_mode: 'read-only', network: false, approval_policy: 'on-request', backend: 'auto', execution_mode: 'local' },
    warnings: [],
    ...over,
  }) as unknown as TaskRow;

describe('the editor', () => {
  it('loads a task and saves it back unchanged', () => {
    const s = editorFromTask(row());
    expect(s).toMatchObject({ command: "sh -c 'echo hi'", env: 'A=1', secrets: 'TOKEN', timeout: '30m', holdDeadline: '24h', enabled: false, department: 'ops' });
    const { form, errors } = toTaskForm(s);
    expect(errors).toEqual({});
    expect(form).toMatchObject({
      name: 'nightly',
      argv: ['sh', '-c', 'echo hi'],
      cwd: '/srv/x',
      schedule: '0 2 * * *',
      time_zone: 'Europe/Madrid',
      overrides: { sandbox_mode: 'read-only' },
      env: { A: '1' },
      secrets: ['TOKEN'],
      timeout: '30m',
      overlap: 'queue',
      missed: 'run_once',
      disabled: true,
    });
  });

  it('names each field the window can check', () => {
    const s = { ...emptyEditor('UTC'), command: 'echo "x', env: 'bad', secrets: 'sk-live-abcdefghijklmnopqrstuvwxyz' };
    const { form, errors } = toTaskForm(s);
    expect(form).toBeUndefined();
    expect(Object.keys(errors).sort()).toEqual(['command', 'cwd', 'env', 'name', 'secrets']);
    expect(errors.secrets).toMatch(/names, not values/);
    expect(toTaskForm({ ...emptyEditor('UTC'), name: 'x', cwd: '/srv' }).errors.command).toMatch(/write the command/);
  });

  it('builds an agent task from the editor and loads it back', () => {
    const s = { ...emptyEditor('UTC'), name: 'tidy', cwd: '/srv/x', agent: 'claude' as const, prompt: 'Tidy the build.\nThen stop.', model: 'm1', keySecret: 'MY_KEY' };
    const { form, errors } = toTaskForm(s);
    expect(errors).toEqual({});
    expect(form?.argv).toEqual([]);
    expect(form?.agent).toEqual({ kind: 'claude', prompt: 'Tidy the build.\nThen stop.', model: 'm1', api_base: '', api_key_secret: 'MY_KEY' });
    const back = editorFromTask(row({ argv: ['claude'], agent: form?.agent }));
    expect(back).toMatchObject({ agent: 'claude', command: '', prompt: 'Tidy the build.\nThen stop.', model: 'm1', keySecret: 'MY_KEY' });
    expect(taskRuns({ argv: ['claude'], agent: form?.agent })).toBe('Claude Code (m1) on "Tidy the build."');
    expect(toTaskForm({ ...s, prompt: '  ' }).errors.prompt).toMatch(/prompt/);
  });

  it('starts a new task daily at 02:00 in the given zone', () => {
    expect(emptyEditor('Europe/Madrid')).toMatchObject({ schedule: '0 2 * * *', tz: 'Europe/Madrid', overlap: 'skip', missed: 'skip', enabled: true });
  });

  it.each([
    ['task name "a b": use 1-64 letters', 'name'],
    ['task x already exists: pick another name or edit it', 'name'],
    ['task x: no command: give it after `--`', 'command'],
    ['task x: working directory "y" is not absolute: give a full path', 'cwd'],
    ['task x: invalid schedule "61 * * * *": end of range (61) above maximum (59): 61; use five fields', 'schedule'],
    ['task x: invalid schedule "TZ=UTC 0 2 * * *": give the time zone separately (--tz Europe/Madrid), not in the line', 'schedule'],
    ['task x: unknown time zone "Mars/Olympus": give an IANA name', 'tz'],
    ['task x: department nope: not found (see `airlock dept list`): create it first with `airlock dept add nope DIR`', 'department'],
    ['task x: unknown sandbox mode "yolo": use one of', 'overrides'],
    ['task x: secret name "a b" must be a valid environment variable name', 'secrets'],
    ['task x: environment variable name "1A" is not valid', 'env'],
    ['timeout "soon": give a duration such as 90s', 'timeout'],
    ['no-progress timeout "x": give a duration', 'noProgress'],
    ['hold deadline "x": give a duration', 'holdDeadline'],
    ['task x: overlap "y": use skip, queue or allow', 'overlap'],
    ['task x: missed-run policy "y": use skip or run_once', 'missed'],
    ['task x: invalid agent: the prompt is empty: give a file with the prompt text', 'prompt'],
    ['task x: invalid agent: API base "api.openai.com" is not an http(s) URL', 'apiBase'],
    ['task x: API key secret name "a b" must be a valid environment variable name', 'agent'],
    ['task x: an agent task needs its model API (https://api.anthropic.com), and its network is off', 'agent'],
    ['database is locked', undefined],
  ])('%s → %s', (msg, field) => expect(errorField(msg)).toBe(field));
});

describe('policy', () => {
  it('marks full access with never, only that', () => {
    expect(isDangerous('full-access', 'never')).toBe(true);
    expect(isDangerous('danger-full-access', 'never')).toBe(true);
    expect(isDangerous('full-access', 'on-request')).toBe(false);
    expect(isDangerous('workspace-write', 'never')).toBe(false);
    expect(isDangerous(undefined, 'never')).toBe(false);
  });
  it('layers task overrides over department defaults', () => {
    expect(layered({ sandbox_mode: 'full-access', approval_policy: 'never', network: true }, { approval_policy: 'on-request', sandbox_mode: '' })).toEqual({
      sandbox_mode: 'full-access',
      approval_policy: 'on-request',
      network: true,
    });
    expect(cleanDefaults({ posture: '', network: false })).toEqual({ network: false });
    expect(cleanDefaults({ profile: 'demo', sandbox_mode: '' })).toEqual({ profile: 'demo' });
  });
  it('warns before saving', () => {
    expect(editorWarnings({ sandbox_mode: 'full-access', approval_policy: 'never' }, '/srv', '/home/ana')).toHaveLength(1);
    expect(editorWarnings({}, '/home/ana/', '/home/ana')[0]).toMatch(/home directory/);
    expect(editorWarnings({}, '~', '/home/ana')[0]).toMatch(/home directory/);
    expect(editorWarnings({}, '/home/ana/code', '/home/ana')).toEqual([]);
  });
  it('says beside the badge only what the badge does not show', async () => {
    const { defaultsBesideBadge } = await import('./dispatch');
    expect(defaultsBesideBadge({ sandbox_mode: 'read-only', network: true })).toBe('the rest inherited');
    expect(defaultsBesideBadge({ sandbox_mode: 'read-only', network: false, approval_policy: 'never' })).toBe('network off · approval never');
    expect(defaultsBesideBadge({ network: true })).toBe('network on');
    expect(defaultsBesideBadge({})).toBe('inherits the global settings');
  });
  it('says what defaults set', () => {
    expect(defaultsWords({ sandbox_mode: 'read-only', network: true, approval_policy: 'never' })).toBe('read-only · network on · approval never');
    expect(defaultsWords({})).toBe('inherits the global settings');
    expect(defaultsWords({ network: 'allowlist' })).toBe("network allowlist (only the allowed domains, through Airlock's egress proxy)");
    expect(defaultsWords({ network: 'on' })).toBe('network on');
    expect(defaultsWords({ posture: 'cloudops', network: false, execution_mode: 'auto' })).toBe('posture cloudops · network off · execution auto');
  });
});

const run = (over: Partial<Run> = {}): Run => ({ id: 7, task_id: 1, status: 'succeeded', paused: false, ...over }) as unknown as Run;

describe('runs', () => {
  it('says states in words with a tone', () => {
    expect(statusWords(run({ status: 'waiting_directory' }))).toBe('waiting for a directory');
    expect(statusTone(run({ status: 'waiting_directory' }))).toBe('held');
    expect(statusWords(run({ status: 'running', paused: true }))).toBe('paused');
    expect(statusWords(run({ status: 'running', waiting_for: 'run-7-domain-x' }))).toBe('waiting for you');
    expect(statusTone(run({ status: 'running', waiting_for: 'run-7-domain-x' }))).toBe('held');
    expect(statusWords(run({ status: 'running' }))).toBe('running');
    expect(statusTone(run({ status: 'timed_out' }))).toBe('bad');
    expect(statusWords(run({ status: 'new_state' }))).toBe('new state');
    expect(statusTone(run({ status: 'new_state' }))).toBe('muted');
  });
  it('cancels only what may still change', () => {
    expect(canCancel(run({ status: 'running' }))).toBe(true);
    expect(canCancel(run({ status: 'waiting_approval' }))).toBe(true);
    expect(canCancel(run({ status: 'succeeded' }))).toBe(false);
  });
  it('says the outcome', () => {
    const now = new Date('2026-11-30T10:00:00Z');
    expect(runOutcome(run({ exit_code: 0, started_at: '2026-11-30T09:59:48Z', finished_at: '2026-11-30T10:00:00Z' }), now)).toBe('exit 0 · after 12 s');
    expect(runOutcome(run({ status: 'running', started_at: '2026-11-30T09:58:00Z' }), now)).toBe('for 2 min');
    expect(runOutcome(run({ status: 'skipped', skip_reason: 'overlap' }), now)).toBe('a run of the task was still active');
    expect(runOutcome(run({ status: 'failed', signal: 'SIGKILL' }), now)).toBe('signal SIGKILL');
    expect(runOutcome(run({ status: 'skipped', skip_reason: 'missed', missed_count: 412 }), now)).toBe('412 occurrences missed');
    expect(runOutcome(run({ exit_code: 0, catch_up: 'late: the app was closed; running the latest occurrence once' }), now)).toBe('exit 0 · ran late, once');

    // The core's clock a little ahead of the window's: never a negative or empty duration.
    expect(runOutcome(run({ status: 'running', started_at: '2026-11-30T10:00:01Z' }), now)).toBe('for 0 s');
  });
  it('says what a span of missed occurrences stands for', () => {
    expect(missedSpan(run({ missed_count: 1 }))).toBe('');
    const s = missedSpan(run({ missed_count: 412, scheduled_at: '2026-11-30T01:00:00Z', missed_until: '2026-11-30T07:51:00Z' }));
    expect(s.startsWith('412 occurrences, from ')).toBe(true);
  });
});

describe('the live log', () => {
  it('joins the tail with chunks that arrived meanwhile, without repeating', () => {
    expect(mergeTail('a\nb\n', ['b\n', 'c\n'])).toBe('a\nb\nc\n');
    expect(mergeTail('a\nb\nc\n', ['b\n', 'c\n'])).toBe('a\nb\nc\n');
    expect(mergeTail('a\n', ['b\n', 'c\n'])).toBe('a\nb\nc\n');
    expect(mergeTail('', ['x'])).toBe('x');
    expect(mergeTail('tail', [])).toBe('tail');
  });
  it('keeps at most its limit, dropping whole lines from the front', () => {
    const b = new LogBuffer(20);
    b.set('line-1\nline-2\n');
    b.append('line-3\nline-4\n');
    expect(b.text.length).toBeLessThanOrEqual(20);
    expect(b.text.startsWith('line-')).toBe(true);
    expect(b.text.endsWith('line-4\n')).toBe(true);
    expect(b.dropped + b.text.length).toBe(28);
    b.prepend('zero\n');
    expect(b.text.endsWith('line-4\n')).toBe(true);
  });
  it('follows only at the bottom', () => {
    expect(atBottom(900, 100, 1000)).toBe(true);
    expect(atBottom(880, 100, 1000)).toBe(true);
    expect(atBottom(500, 100, 1000)).toBe(false);
  });
  it('says sizes', () => {
    expect(byteWords(812)).toBe('812 B');
    expect(byteWords(3500)).toBe('3.4 KiB');
    expect(byteWords(2 * 1024 ** 3)).toBe('2.0 GiB');
  });
});

describe('times and pacing', () => {
  it('shows a time on the task zone wall clock', async () => {
    const { zonedTime } = await import('./dispatch');
    expect(zonedTime('2026-12-01T01:00:00Z', 'Europe/Madrid')).toMatch(/02:00/);
    expect(zonedTime('2026-12-01T01:00:00Z', '')).toMatch(/01:00/);
    expect(zonedTime('2026-12-01T01:00:00Z', 'Not/AZone')).toMatch(/01:00 UTC/);
    expect(zonedTime('nonsense', 'UTC')).toBe('nonsense');
  });
  it('lists time zones, UTC first, with a fallback', async () => {
    const { timeZones } = await import('./dispatch');
    expect(timeZones(() => ['Africa/Abidjan', 'UTC', 'Europe/Madrid'])).toEqual(['UTC', 'Africa/Abidjan', 'Europe/Madrid']);
    expect(timeZones(() => [])[0]).toBe('UTC');
    expect(timeZones(() => { throw new Error('no Intl'); })).toContain('Europe/Madrid');
  });
  it('debounces to the last call', async () => {
    const { debounce } = await import('./dispatch');
    vi.useFakeTimers();
    const got: string[] = [];
    const d = debounce((s: string) => got.push(s), 100);
    d('a');
    d('b');
    vi.advanceTimersByTime(99);
    expect(got).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(got).toEqual(['b']);
    d('c');
    d.cancel();
    vi.advanceTimersByTime(200);
    expect(got).toEqual(['b']);
    vi.useRealTimers();
  });
  it('delivers only the newest answer', async () => {
    const { latestOnly } = await import('./dispatch');
    const resolvers: ((v: string) => void)[] = [];
    const got: string[] = [];
    const call = latestOnly(
      () => new Promise<string>((ok) => resolvers.push(ok)),
      (r) => got.push(r),
      () => got.push('error'),
    );
    call();
    call();
    resolvers[1]?.('second');
    resolvers[0]?.('first');
    await new Promise((r) => setTimeout(r, 0));
    expect(got).toEqual(['second']);
  });
});
