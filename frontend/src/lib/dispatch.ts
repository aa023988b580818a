// The Dispatch and Departments pages' logic: the command line as words, the editor's
// fields to and from the core's task, which field an error of the core belongs to, run
// states in words, and the live log's buffer. Components only render what these return.
import type { Defaults, Run, TaskForm, TaskRow } from './api-dispatch';
import type { RunLogChunk } from './wire.gen';
import { networkLabel, networkOf } from './network';

// ---------------------------------------------------------------------------------
// The command: typed as a shell-like line, stored as exact words (argv).

/** splitCommand splits a command line into words: spaces separate, '…' and "…" quote, \ escapes. Nothing is expanded. */
export function splitCommand(line: string): { argv: string[]; error?: string } {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 < line.length) word += line[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return { argv, error: `unclosed ${quote === '"' ? 'double' : 'single'} quote: close it, or escape it with \\` };
  if (inWord) argv.push(word);
  return { argv };
}

/** quoteWord quotes a word so splitCommand reads it back unchanged. */
export function quoteWord(w: string): string {
  if (w === '') return "''";
  if (/^[A-Za-z0-9_@%+=:,./~^-]+$/.test(w)) return w;
  return "'" + w.replaceAll("'", `'\\''`) + "'";
}

/** joinCommand is the command line of argv, quoted where a word needs it. */
export function joinCommand(argv: readonly string[] | undefined): string {
  return (argv ?? []).map(quoteWord).join(' ');
}

// ---------------------------------------------------------------------------------
// Environment and secrets.

/** parseEnv reads NAME=value lines (blank lines and # comments skipped). */
export function parseEnv(text: string): { env: Record<string, string>; error?: string } {
  const env: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return { env, error: `line ${i + 1}: write NAME=value` };
    const name = line.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return { env, error: `line ${i + 1}: ${name} is not a valid variable name (letters, digits, _)` };
    env[name] = line.slice(eq + 1);
  }
  return { env };
}

/** formatEnv is the editor's text of env, sorted by name. */
export function formatEnv(env: Record<string, string> | undefined): string {
  return Object.keys(env ?? {})
    .sort()
    .map((k) => `${k}=${(env ?? {})[k]}`)
    .join('\n');
}

/** parseSecrets reads secret names separated by spaces or commas (never values). */
export function parseSecrets(text: string): string[] {
  const seen = new Set<string>();
  for (const s of text.split(/[\s,]+/)) if (s !== '') seen.add(s);
  return [...seen];
}

/** looksLikeSecretValue tells when a "name" is probably a pasted value: the field takes names only. */
export function looksLikeSecretValue(name: string): boolean {
  return name.length >= 20 && !/^[A-Z][A-Z0-9_]*$/.test(name);
}

// ---------------------------------------------------------------------------------
// Durations: Go sends nanoseconds; the editor shows "1h30m".

const NS = { h: 3_600e9, m: 60e9, s: 1e9 } as const;

/** durationText is a Go duration (ns) as the editor writes it: "1h30m", "45s"; "" for none. */
export function durationText(ns: number | undefined): string {
  if (!ns || ns <= 0) return '';
  let rest = Math.round(ns / 1e9) * 1e9;
  let out = '';
  for (const [unit, size] of Object.entries(NS)) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out || '1s';
}

/** durationWords is a duration for reading: "1 h 30 min", "45 s". */
export function durationWords(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

// ---------------------------------------------------------------------------------
// The editor.

/** Fields of the task editor an error can belong to. */
export type Field = 'name' | 'command' | 'agent' | 'prompt' | 'apiBase' | 'cwd' | 'schedule' | 'tz' | 'department' | 'overrides' | 'env' | 'secrets' | 'timeout' | 'noProgress' | 'holdDeadline' | 'overlap' | 'missed';

/** AgentKind is what a task runs: '' a command, else a coding agent. */
export type AgentKind = '' | 'claude' | 'codex' | 'opencode';

/** agentKinds are the editor's choices of what a task runs, with their names. */
export const agentKinds: { kind: AgentKind; label: string; base: string; key: string }[] = [
  { kind: '', label: 'Command', base: '', key: '' },
  { kind: 'claude', label: 'Claude Code', base: 'https://api.anthropic.com', key: 'ANTHROPIC_API_KEY' },
  { kind: 'codex', label: 'Codex', base: 'https://api.openai.com/v1', key: 'OPENAI_API_KEY' },
  { kind: 'opencode', label: 'opencode', base: 'https://api.openai.com/v1', key: 'OPENAI_API_KEY' },
];

/** taskRuns is what a task runs, in words: its command, or its agent, model and prompt's first line. */
export function taskRuns(t: Pick<TaskRow, 'argv' | 'agent'>): string {
  if (!t.agent) return joinCommand(t.argv);
  const name = agentKinds.find((k) => k.kind === t.agent?.kind)?.label ?? t.agent.kind;
  const first = t.agent.prompt.trim().split('\n')[0] ?? '';
  return `${name}${t.agent.model ? ` (${t.agent.model})` : ''} on "${first.length > 70 ? first.slice(0, 67) + '…' : first}"`;
}

/** EditorState is what the editor's inputs hold (text, as typed). */
export interface EditorState {
  name: string;
  command: string;
  /** agent is '' for a command, else the agent kind (claude, codex, opencode). */
  agent: AgentKind;
  prompt: string;
  model: string;
  apiBase: string;
  keySecret: string;
  cwd: string;
  schedule: string;
  tz: string;
  department: string;
  overrides: Defaults;
  env: string;
  secrets: string;
  timeout: string;
  noProgress: string;
  holdDeadline: string;
  overlap: string;
  missed: string;
  enabled: boolean;
}

/** localZone is the machine's IANA zone, the editor's default for a new task. */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** emptyEditor is a new task's editor: daily at 02:00 in the local zone, skip on overlap and missed runs. */
export function emptyEditor(tz = localZone()): EditorState {
  return {
    name: '',
    command: '',
    agent: '',
    prompt: '',
    model: '',
    apiBase: '',
    keySecret: '',
    cwd: '',
    schedule: '0 2 * * *',
    tz,
    department: '',
    overrides: {},
    env: '',
    secrets: '',
    timeout: '',
    noProgress: '',
    holdDeadline: '',
    overlap: 'skip',
    missed: 'skip',
    enabled: true,
  };
}

/** editorFromTask is the editor filled with an existing task. */
export function editorFromTask(t: TaskRow): EditorState {
  return {
    name: t.name,
    command: t.agent ? '' : joinCommand(t.argv),
    agent: (t.agent?.kind ?? '') as AgentKind,
    prompt: t.agent?.prompt ?? '',
    model: t.agent?.model ?? '',
    apiBase: t.agent?.api_base ?? '',
    keySecret: t.agent?.api_key_secret ?? '',
    cwd: t.cwd,
    schedule: t.schedule,
    tz: t.time_zone,
    department: t.department ?? '',
    overrides: { ...(t.overrides ?? {}) },
    env: formatEnv(t.env),
    secrets: (t.secrets ?? []).join(' '),
    timeout: durationText(t.timeout),
    noProgress: durationText(t.no_progress_timeout),
    holdDeadline: durationText(t.hold_deadline),
    overlap: t.overlap || 'skip',
    missed: t.missed || 'skip',
    enabled: t.enabled,
  };
}

/** cleanDefaults drops unset fields so the core sees "inherit" for them. */
export function cleanDefaults(d: Defaults): Defaults {
  const out: Defaults = {};
  if (d.profile) out.profile = d.profile;
  if (d.posture) out.posture = d.posture;
  if (d.sandbox_mode) out.sandbox_mode = d.sandbox_mode;
  // off, allowlist, on (or the booleans the core also takes): sent as chosen.
  if (d.network !== undefined && d.network !== null && d.network !== '') out.network = d.network;
  if (d.approval_policy) out.approval_policy = d.approval_policy;
  if (d.execution_mode) out.execution_mode = d.execution_mode;
  return out;
}

/** toTaskForm checks what the window can check itself and builds the core's form; errors name their field. */
export function toTaskForm(s: EditorState): { form?: TaskForm; errors: Partial<Record<Field, string>> } {
  const errors: Partial<Record<Field, string>> = {};
  const cmd = s.agent ? { argv: [] as string[] } : splitCommand(s.command.trim());
  if (cmd.error) errors.command = cmd.error;
  else if (!s.agent && cmd.argv.length === 0) errors.command = 'write the command to run, e.g. /usr/bin/backup --full';
  if (s.agent && s.prompt.trim() === '') errors.prompt = 'write the prompt the agent runs on';
  const env = parseEnv(s.env);
  if (env.error) errors.env = env.error;
  const secrets = parseSecrets(s.secrets);
  const pasted = secrets.find(looksLikeSecretValue);
  if (pasted) errors.secrets = 'this field takes secret names, not values: store the value in the secret store (airlock secret set NAME) and give its NAME here';
  if (s.name.trim() === '') errors.name = 'give the task a name (letters, digits, . _ -)';
  if (s.cwd.trim() === '') errors.cwd = 'choose the directory the command runs in';
  if (Object.keys(errors).length > 0) return { errors };
  return {
    errors,
    form: {
      name: s.name.trim(),
      argv: cmd.argv,
      agent: s.agent
        ? { kind: s.agent, prompt: s.prompt, model: s.model.trim(), api_base: s.apiBase.trim(), api_key_secret: s.keySecret.trim() }
        : undefined,
      cwd: s.cwd.trim(),
      schedule: s.schedule.trim(),
      time_zone: s.tz.trim(),
      department: s.department,
      overrides: cleanDefaults(s.overrides),
      env: env.env,
      secrets,
      timeout: s.timeout.trim(),
      no_progress_timeout: s.noProgress.trim(),
      hold_deadline: s.holdDeadline.trim(),
      overlap: s.overlap,
      missed: s.missed,
      disabled: !s.enabled,
    },
  };
}

/** errorField tells which editor field an error of the core is about (undefined: the form as a whole). */
export function errorField(message: string): Field | undefined {
  const m = message.toLowerCase();
  const rules: [RegExp, Field][] = [
    [/task name|already exists/, 'name'],
    [/the prompt/, 'prompt'],
    [/api base/, 'apiBase'],
    [/invalid agent|agent "|api key secret|model api/, 'agent'],
    [/no command/, 'command'],
    [/working directory/, 'cwd'],
    [/invalid schedule|empty schedule|@every/, 'schedule'],
    [/time zone/, 'tz'],
    [/department|airlock dept add/, 'department'],
    [/unknown (profile|posture|sandbox mode|approval policy|execution mode)/, 'overrides'],
    [/secret/, 'secrets'],
    [/environment variable|airlock_ variables/, 'env'],
    [/no-progress timeout/, 'noProgress'],
    [/hold deadline "/, 'holdDeadline'],
    [/timeout/, 'timeout'],
    [/overlap/, 'overlap'],
    [/missed-run/, 'missed'],
  ];
  for (const [re, field] of rules) if (re.test(m)) return field;
  return undefined;
}

export { errorText } from './errors';

// ---------------------------------------------------------------------------------
// Policy words and warnings.

export const sandboxModes = ['read-only', 'workspace-write', 'full-access'] as const;
export const approvalPolicies = ['untrusted', 'on-request', 'on-failure', 'never'] as const;
export const executionModes = ['local', 'sandbox', 'auto'] as const;
export const postures = ['standard', 'cloudops'] as const;

/** What each value means, shown beside the choice. */
export const policyWords: Record<string, string> = {
  'read-only': 'reads anywhere, writes nowhere',
  'workspace-write': 'writes only inside its working directory',
  'full-access': 'writes anywhere your user can',
  untrusted: 'asks before anything not known safe',
  'on-request': 'asks when the command asks for more',
  'on-failure': 'asks only after a sandboxed attempt fails',
  never: 'never asks: what is not allowed fails',
  local: 'runs on this machine in the OS sandbox',
  sandbox: 'runs in the micro-VM',
  auto: 'micro-VM when installed, else local',
  standard: 'the usual defaults',
  cloudops: 'network on, for infrastructure work',
};

/** isDangerous is the combination UI.md marks in red: full access with approval never. */
export function isDangerous(mode: string | undefined, approval: string | undefined): boolean {
  return (mode === 'full-access' || mode === 'danger-full-access') && approval === 'never';
}

/** layered is the policy as far as the window knows it: department defaults, then the task's overrides. */
export function layered(dept: Defaults | undefined, overrides: Defaults): Defaults {
  return { ...cleanDefaults(dept ?? {}), ...cleanDefaults(overrides) };
}

/** editorWarnings are the red lines the editor shows before saving. */
export function editorWarnings(policy: Defaults, cwd: string, home: string): string[] {
  const out: string[] = [];
  if (isDangerous(policy.sandbox_mode, policy.approval_policy)) {
    out.push('Full access with approval never: every run may change anything your user can, and nothing asks you first.');
  }
  const dir = cwd.trim().replace(/\/+$/, '');
  const h = home.replace(/\/+$/, '');
  if (dir !== '' && (dir === '~' || (h !== '' && dir === h))) out.push('Runs in your home directory: everything in it is within reach of the command.');
  return out;
}

/** defaultsWords says what a department's (or a task's) defaults set, for the list: "read-only · network on". */
export function defaultsWords(d: Defaults | undefined): string {
  const c = cleanDefaults(d ?? {});
  const parts: string[] = [];
  if (c.profile) parts.push(`profile ${c.profile}`);
  if (c.posture) parts.push(`posture ${c.posture}`);
  if (c.sandbox_mode) parts.push(c.sandbox_mode);
  if (c.network !== undefined) parts.push(networkLabel(c.network));
  if (c.approval_policy) parts.push(`approval ${c.approval_policy}`);
  if (c.execution_mode) parts.push(`execution ${c.execution_mode}`);
  return parts.length ? parts.join(' · ') : 'inherits the global settings';
}

/** defaultsBesideBadge is defaultsWords for what the mode badge beside it does not show (it shows the mode and network on). */
export function defaultsBesideBadge(d: Defaults | undefined): string {
  const c = cleanDefaults(d ?? {});
  if (!c.sandbox_mode) return defaultsWords(c);
  const rest: Defaults = { ...c };
  delete rest.sandbox_mode;
  if (networkOf(rest.network) !== 'off') delete rest.network;
  return Object.keys(rest).length > 0 ? defaultsWords(rest) : 'the rest inherited';
}

// ---------------------------------------------------------------------------------
// Runs.

export type StatusTone = 'ok' | 'bad' | 'held' | 'active' | 'muted';

const statusInfo: Record<string, [string, StatusTone]> = {
  queued: ['queued', 'active'],
  waiting_directory: ['waiting for a directory', 'held'],
  waiting_approval: ['waiting for approval', 'held'],
  running: ['running', 'active'],
  succeeded: ['succeeded', 'ok'],
  failed: ['failed', 'bad'],
  timed_out: ['timed out', 'bad'],
  cancelled: ['cancelled', 'muted'],
  denied: ['denied', 'bad'],
  interrupted: ['interrupted', 'bad'],
  expired: ['expired', 'bad'],
  skipped: ['skipped', 'muted'],
};

/**
 * statusWords is a run state in words ("waiting for a directory"); a paused run says so, and
 * so does a running one whose command waits for your answer (waiting_for).
 */
export function statusWords(r: Pick<Run, 'status' | 'paused' | 'waiting_for'>): string {
  if (r.paused) return 'paused';
  if (r.status === 'running' && r.waiting_for) return 'waiting for you';
  return statusInfo[r.status]?.[0] ?? r.status.replaceAll('_', ' ');
}

/** statusTone is the colour family of a run state. */
export function statusTone(r: Pick<Run, 'status' | 'paused' | 'waiting_for'>): StatusTone {
  if (r.paused || (r.status === 'running' && r.waiting_for)) return 'held';
  return statusInfo[r.status]?.[1] ?? 'muted';
}

/** isActive tells whether a run may still change (the log view follows it). */
export function isActive(status: string): boolean {
  return status === 'queued' || status === 'running' || status === 'waiting_directory' || status === 'waiting_approval';
}

/** canCancel: queued, held, running or paused runs can be cancelled. */
export function canCancel(r: Pick<Run, 'status' | 'paused'>): boolean {
  return isActive(r.status) || r.paused;
}

/** The run filters the Runs view offers: groups first, then single states. */
export const statusFilters: readonly { value: string; label: string }[] = [
  { value: '', label: 'All runs' },
  { value: 'active', label: 'Queued or running' },
  { value: 'waiting', label: 'Waiting for you' },
  { value: 'failed', label: 'Failed, timed out, denied…' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'cancelled', label: 'Cancelled' },
  { value: 'skipped', label: 'Skipped' },
];

/** runOutcome is a finished run's result in words: "exit 0 after 12 s", "signal SIGKILL", the reason. */
export function runOutcome(r: Run, now: Date): string {
  const started = r.started_at ? new Date(r.started_at as string) : undefined;
  const finished = r.finished_at ? new Date(r.finished_at as string) : undefined;
  const parts: string[] = [];
  if (r.exit_code !== undefined && r.exit_code !== null) parts.push(`exit ${r.exit_code}`);
  if (r.signal) parts.push(`signal ${r.signal}`);
  if (started && !Number.isNaN(started.getTime())) {
    const end = finished && !Number.isNaN(finished.getTime()) ? finished : now;
    parts.push(`${finished ? 'after' : 'for'} ${durationWords(Math.max(0, end.getTime() - started.getTime()))}`);
  }
  if (r.status === 'skipped' && r.skip_reason === 'missed' && (r.missed_count ?? 0) > 1) parts.push(`${r.missed_count} occurrences missed`);
  else if (r.status === 'skipped' && r.skip_reason) parts.push(skipWords[r.skip_reason] ?? r.skip_reason);
  if (r.catch_up) parts.push('ran late, once');
  return parts.join(' · ');
}

/** missedSpan says what a row of missed occurrences stands for: "412 occurrences, from … to …" ('' for one). */
export function missedSpan(r: Pick<Run, 'missed_count' | 'missed_until' | 'scheduled_at'>): string {
  if (!r.missed_count || r.missed_count < 2 || !r.missed_until) return '';
  const from = new Date(r.scheduled_at as string);
  const to = new Date(r.missed_until as string);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) return `${r.missed_count} occurrences`;
  return `${r.missed_count} occurrences, from ${from.toLocaleString()} to ${to.toLocaleString()}`;
}

const skipWords: Record<string, string> = {
  missed: 'missed (the reason says why)',
  overlap: 'a run of the task was still active',
  slot_busy: 'no free slot',
  paused: 'the task was paused',
  backlog_full: 'too many runs of the task were already waiting',
};

// ---------------------------------------------------------------------------------
// The live log.

/** A run.log event: a chunk of a run's output (secrets already redacted by the core). */
export type LogChunk = RunLogChunk;

/**
 * mergeTail joins the log's tail read from the file with the chunks that arrived while it
 * was read: the core publishes a chunk before writing it, so the file already holds the
 * first few of them. The longest run of leading chunks the tail ends with is dropped.
 */
export function mergeTail(tail: string, arrived: readonly string[]): string {
  for (let k = arrived.length; k > 0; k--) {
    const joined = arrived.slice(0, k).join('');
    if (joined !== '' && tail.endsWith(joined)) return tail + arrived.slice(k).join('');
  }
  return tail + arrived.join('');
}

/**
 * LogBuffer holds what the log viewer shows, at most `limit` characters: past it the
 * oldest lines are dropped (the viewer says how much and offers to load from the file).
 */
export class LogBuffer {
  text = '';
  dropped = 0;

  constructor(readonly limit = 512 * 1024) {}

  /** set replaces the content (the tail read from the file). */
  set(text: string): void {
    this.text = '';
    this.dropped = 0;
    this.append(text);
  }

  /** room is how many more characters fit before the oldest lines are dropped. */
  get room(): number {
    return Math.max(0, this.limit - this.text.length);
  }

  /** prepend adds an earlier piece read from the file in front, as much of its end as fits (whole lines). */
  prepend(text: string): void {
    let piece = text;
    if (piece.length > this.room) {
      piece = piece.slice(piece.length - this.room);
      const nl = piece.indexOf('\n');
      if (nl >= 0) piece = piece.slice(nl + 1);
    }
    this.text = piece + this.text;
  }

  /** append adds live output at the end. */
  append(chunk: string): void {
    this.text += chunk;
    this.trimFront();
  }

  private trimFront(): void {
    if (this.text.length <= this.limit) return;
    let cut = this.text.length - this.limit;
    const nl = this.text.indexOf('\n', cut);
    if (nl >= 0 && nl - cut < 4096) cut = nl + 1;
    this.dropped += cut;
    this.text = this.text.slice(cut);
  }
}

/** atBottom tells whether a scrolled box shows its end (within slack px): the viewer follows new output only then. */
export function atBottom(scrollTop: number, clientHeight: number, scrollHeight: number, slack = 24): boolean {
  return scrollHeight - (scrollTop + clientHeight) <= slack;
}

/** byteWords is a size for reading: "812 B", "3.4 KiB", "2.0 GiB". */
export function byteWords(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

// ---------------------------------------------------------------------------------
// Times in a task's zone, and the live preview's pacing.

/** zonedTime is an RFC 3339 time on the wall clock of tz (the task's zone): "Tue, Dec 1, 02:00". */
export function zonedTime(iso: string, tz: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const opts: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
  try {
    return d.toLocaleString(undefined, { ...opts, timeZone: tz || 'UTC' });
  } catch {
    return d.toLocaleString(undefined, { ...opts, timeZone: 'UTC' }) + ' UTC';
  }
}

/** timeZones lists the IANA zones the engine knows (UTC first), for the time-zone field's suggestions. */
export function timeZones(supported: () => string[] = () => (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? []): string[] {
  let list: string[] = [];
  try {
    list = supported();
  } catch {
    list = [];
  }
  if (list.length === 0) list = ['Europe/Madrid', 'Europe/London', 'America/New_York', 'America/Los_Angeles', 'Asia/Tokyo'];
  return ['UTC', ...list.filter((z) => z !== 'UTC')];
}

/** debounce calls fn with the last arguments once calls stop for ms. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): ((...args: A) => void) & { cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const call = (...args: A): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...args);
    }, ms);
  };
  call.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return call;
}

/** latestOnly wraps an async call so only the newest call's result is delivered (typing outruns answers). */
export function latestOnly<A extends unknown[], R>(fn: (...args: A) => Promise<R>, deliver: (r: R) => void, fail: (err: unknown) => void): (...args: A) => void {
  let seq = 0;
  return (...args: A) => {
    const mine = ++seq;
    fn(...args).then(
      (r) => {
        if (mine === seq) deliver(r);
      },
      (err: unknown) => {
        if (mine === seq) fail(err);
      },
    );
  };
}
