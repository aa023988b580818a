// Words and logic of the Ops page: plans as plan → diff → approve → apply → verify →
// journal. Components only render what these functions decide.
import type { PlanSummary } from './api';
import type { OpsJournalAppended, OpsPlanUpdated } from './wire.gen';

/** planTarget names what a plan changes: provider, then account, region or device. */
export function planTarget(p: Pick<PlanSummary, 'provider' | 'account' | 'region' | 'device'>): string {
  const rest = [p.account, p.region, p.device].filter((s): s is string => !!s);
  return rest.length > 0 ? `${p.provider} · ${rest.join(' · ')}` : p.provider;
}

// ---- Routes: #/ops/PLAN opens a plan. ----

/** planIdFromHash reads "#/ops/op-1234" as "op-1234"; anything else is no plan. */
export function planIdFromHash(hash: string): string {
  const m = /^#\/?ops\/([A-Za-z0-9._-]+)/.exec(hash);
  return m?.[1] ?? '';
}

/** planHash is the route of a plan (or of the plan list). */
export function planHash(id = ''): string {
  return id ? `#/ops/${encodeURIComponent(id)}` : '#/ops';
}

// ---- Risk: reversibility and blast radius, always in words and the same colours. ----

export type Reversibility = 'reversible' | 'hard' | 'irreversible';
export type BlastRadius = 'low' | 'med' | 'high';
/** The badge colours of app.css. */
export type Tone = 'grey' | 'green' | 'amber' | 'red' | 'blue';

interface Risk {
  words: string;
  tone: Tone;
  rank: number;
}

const reversibility: Record<Reversibility, Risk> = {
  reversible: { words: 'can be undone', tone: 'green', rank: 0 },
  hard: { words: 'hard to undo', tone: 'amber', rank: 1 },
  irreversible: { words: 'cannot be undone', tone: 'red', rank: 2 },
};

const blast: Record<BlastRadius, Risk> = {
  low: { words: 'small blast radius', tone: 'grey', rank: 0 },
  med: { words: 'medium blast radius', tone: 'amber', rank: 1 },
  high: { words: 'large blast radius', tone: 'red', rank: 2 },
};

/** reversibilityRisk is how a step can be undone, in words and a tone (unknown values are red). */
export function reversibilityRisk(r: string): Risk {
  return reversibility[r as Reversibility] ?? { words: r || 'reversibility not given', tone: 'red', rank: 2 };
}

/** blastRisk is how much a step can break, in words and a tone (unknown values are red). */
export function blastRisk(b: string): Risk {
  return blast[b as BlastRadius] ?? { words: b || 'blast radius not given', tone: 'red', rank: 2 };
}

/** The fields of a step this page reads. */
export interface StepLike {
  description: string;
  effect: string;
  reversibility: string;
  blast_radius: string;
  rollback?: string;
}

/** danger orders steps: the least reversible first, then the largest blast radius. */
function danger(s: Pick<StepLike, 'reversibility' | 'blast_radius'>): number {
  return reversibilityRisk(s.reversibility).rank * 3 + blastRisk(s.blast_radius).rank;
}

/** stepsByDanger lists steps most dangerous first, each with its number in the plan (1-based). */
export function stepsByDanger<T extends Pick<StepLike, 'reversibility' | 'blast_radius'>>(steps: readonly T[]): { step: T; n: number }[] {
  return steps
    .map((step, i) => ({ step, n: i + 1 }))
    .sort((a, b) => danger(b.step) - danger(a.step) || a.n - b.n);
}

/** worstRisk is the least reversible step and the largest blast radius of a plan. */
export function worstRisk(steps: readonly Pick<StepLike, 'reversibility' | 'blast_radius'>[]): { reversibility: string; blast: string } {
  let r = 'reversible';
  let b = 'low';
  for (const s of steps) {
    if (reversibilityRisk(s.reversibility).rank > reversibilityRisk(r).rank) r = s.reversibility;
    if (blastRisk(s.blast_radius).rank > blastRisk(b).rank) b = s.blast_radius;
  }
  return { reversibility: r, blast: b };
}

// ---- Status and the stage timeline. ----

export type Stage = 'plan' | 'diff' | 'approve' | 'apply' | 'verify' | 'journal';
export type StageState = 'done' | 'current' | 'running' | 'failed' | 'todo' | 'skipped';

export const stages: readonly { id: Stage; title: string }[] = [
  { id: 'plan', title: 'Plan' },
  { id: 'diff', title: 'Diff' },
  { id: 'approve', title: 'Approve' },
  { id: 'apply', title: 'Apply' },
  { id: 'verify', title: 'Verify' },
  { id: 'journal', title: 'Journal' },
];

/** statusWords says what a plan's status means for the person. */
export function statusWords(status: string): string {
  switch (status) {
    case 'draft':
      return 'opened, no diff yet';
    case 'diffed':
      return 'diffed, waiting for your approval';
    case 'approved':
      return 'approved, waiting to be applied with its token';
    case 'applying':
      return 'applying now';
    case 'applied':
      return 'applied, not verified yet';
    case 'failed':
      return 'the apply failed';
    case 'verified':
      return 'applied and verified';
    case 'verify_failed':
      return 'applied, but verification failed';
    case 'rejected':
      return 'rejected';
    case 'expired':
      return 'the approval expired unused';
    case 'superseded':
      return 'replaced by a newer plan';
  }
  return status;
}

/** statusTone is the badge colour of a status. */
export function statusTone(status: string): Tone {
  switch (status) {
    case 'approved':
    case 'applying':
      return 'amber';
    case 'applied':
    case 'verified':
      return 'green';
    case 'failed':
    case 'verify_failed':
    case 'rejected':
      return 'red';
    case 'diffed':
      return 'blue';
  }
  return 'grey';
}

const order: Stage[] = ['plan', 'diff', 'approve', 'apply', 'verify', 'journal'];

/**
 * timeline gives each stage its state for a plan's status: what is done, where the plan
 * stands (current, running, failed) and what comes next. Every step is journaled, so the
 * journal stage is done as soon as the plan exists. A plan rejected before any diff shows
 * the diff skipped (hasDiff false).
 */
export function timeline(status: string, hasDiff = true): Record<Stage, StageState> {
  const at = (current: Stage, state: StageState = 'current'): Record<Stage, StageState> => {
    const i = order.indexOf(current);
    const out = {} as Record<Stage, StageState>;
    order.forEach((s, j) => (out[s] = j < i ? 'done' : j === i ? state : 'todo'));
    out.journal = 'done';
    return out;
  };
  switch (status) {
    case 'draft':
      return at('diff');
    case 'diffed':
    case 'expired':
      return at('approve');
    case 'approved':
      return at('apply');
    case 'applying':
      return at('apply', 'running');
    case 'failed':
      return at('apply', 'failed');
    case 'applied':
      return at('verify');
    case 'verified':
      return at('journal', 'done');
    case 'verify_failed':
      return at('verify', 'failed');
    case 'rejected':
      return { ...at('approve', 'failed'), ...(hasDiff ? {} : { diff: 'skipped' as const }), apply: 'skipped', verify: 'skipped' };
    case 'superseded':
      return { plan: 'done', diff: 'skipped', approve: 'skipped', apply: 'skipped', verify: 'skipped', journal: 'done' };
  }
  return at('plan');
}

/** What the person can do next with a plan. */
export interface Actions {
  diff: boolean;
  approve: boolean;
  apply: boolean;
  verify: boolean;
  reject: boolean;
}

/**
 * actionsFor says which buttons a plan offers, as the core allows them: diff in draft,
 * diffed, failed or expired (when the plan has a diff command); approve once diffed (or
 * expired, or approved with a token that lapsed: the core marks it expired first) and no
 * token is live; apply while approved with a live token; verify after an apply; reject
 * before anything was applied.
 */
export function actionsFor(status: string, opts: { hasDiffCommand: boolean; liveToken: boolean; hasDiff: boolean }): Actions {
  return {
    diff: opts.hasDiffCommand && ['draft', 'diffed', 'failed', 'expired'].includes(status),
    approve: opts.hasDiff && !opts.liveToken && ['diffed', 'expired', 'approved'].includes(status),
    apply: status === 'approved' && opts.liveToken,
    verify: ['applied', 'verified', 'verify_failed'].includes(status),
    reject: ['draft', 'diffed', 'approved', 'expired', 'failed'].includes(status),
  };
}

// ---- The diff. ----

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'file' | 'meta';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** parseDiff classifies each line of a unified diff (other text is shown as context). */
export function parseDiff(text: string): DiffLine[] {
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length === 1 && lines[0] === '') return [];
  return lines.map((line): DiffLine => {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) return { kind: 'file', text: line };
    if (line.startsWith('@@')) return { kind: 'hunk', text: line };
    if (line.startsWith('diff ') || line.startsWith('index ') || line.startsWith('\\ ')) return { kind: 'meta', text: line };
    if (line.startsWith('+')) return { kind: 'add', text: line };
    if (line.startsWith('-')) return { kind: 'del', text: line };
    return { kind: 'ctx', text: line };
  });
}

/** diffStats counts added and removed lines. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'add') added++;
    else if (l.kind === 'del') removed++;
  }
  return { added, removed };
}

/** A run of diff lines shown as is, or a run of unchanged lines folded away. */
export type DiffBlock = { kind: 'lines'; lines: DiffLine[] } | { kind: 'fold'; lines: DiffLine[] };

/**
 * foldDiff folds runs of unchanged lines, keeping keep lines on each side of every
 * change (a run is folded only when that hides at least 4 lines), so a long diff shows
 * its changes first. Every line stays in a block, in order.
 */
export function foldDiff(lines: readonly DiffLine[], keep = 3): DiffBlock[] {
  const isChange = (l: DiffLine | undefined) => l !== undefined && (l.kind === 'add' || l.kind === 'del');
  const out: DiffBlock[] = [];
  let shown: DiffLine[] = [];
  let i = 0;
  const isCtx = (k: number) => lines[k]?.kind === 'ctx';
  while (i < lines.length) {
    const line = lines[i];
    if (line && line.kind !== 'ctx') {
      shown.push(line);
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && isCtx(j)) j++;
    const run = lines.slice(i, j);
    const lead = isChange(lines[i - 1]) ? keep : 0;
    const tail = isChange(lines[j]) ? keep : 0;
    if (run.length - lead - tail >= 4) {
      shown.push(...run.slice(0, lead));
      if (shown.length) out.push({ kind: 'lines', lines: shown });
      out.push({ kind: 'fold', lines: run.slice(lead, run.length - tail) });
      shown = run.slice(run.length - tail);
    } else {
      shown.push(...run);
    }
    i = j;
  }
  if (shown.length) out.push({ kind: 'lines', lines: shown });
  return out;
}

/** looksLikeUnifiedDiff tells a unified diff from other output (a terraform plan, a dry run). */
export function looksLikeUnifiedDiff(text: string): boolean {
  return /^@@ /m.test(text) || (/^--- /m.test(text) && /^\+\+\+ /m.test(text));
}

// ---- Output folding (apply output, snapshots, verify evidence). ----

/** foldLines keeps the first maxLines lines of a long output and says how many were folded. */
export function foldLines(text: string, maxLines = 12): { head: string; hidden: number } {
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length <= maxLines) return { head: text.replace(/\n$/, ''), hidden: 0 };
  return { head: lines.slice(0, maxLines).join('\n'), hidden: lines.length - maxLines };
}

/** shortHash is the first 12 characters of a sha256, as the CLI prints it. */
export function shortHash(h: string): string {
  return h.slice(0, 12);
}

/** durationWords prints a Go duration in nanoseconds as "43 ms" or "2.1 s". */
export function durationWords(ns: number): string {
  const ms = ns / 1e6;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

// ---- The journal. ----

/** The fields of a journal entry this page reads. */
export interface JournalEntryLike {
  seq: number;
  plan_id?: string;
  event: string;
  status?: string;
  actor?: string;
  at: string;
  detail?: Record<string, unknown>;
  hash: string;
}

const eventTitles: Record<string, string> = {
  planned: 'Plan opened',
  superseded: 'Superseded',
  diff_attached: 'Diff attached',
  approved: 'Approved',
  approve_refused: 'Approval refused',
  rejected: 'Rejected',
  expired: 'Approval expired',
  apply_refused: 'Apply refused',
  apply_started: 'Apply started',
  apply_finished: 'Applied',
  apply_failed: 'Apply failed',
  apply_outcome_unknown: 'Apply outcome unknown',
  verified: 'Verified',
  verify_failed: 'Verification failed',
  confirmed: 'Commit confirmed',
  confirm_failed: 'Confirm failed: the device rolls back',
  confirm_withheld: 'Confirm withheld: the device rolls back',
  journal_head_missing: 'Journal head was missing',
};

/** eventTitle names a journal event for people. */
export function eventTitle(event: string): string {
  return eventTitles[event] ?? event.replace(/_/g, ' ');
}

/** eventTone colours a journal event: refusals and failures red, successes green. */
export function eventTone(event: string): Tone {
  if (/failed|refused|rejected|unknown|missing|expired|withheld/.test(event)) return 'red';
  if (event === 'apply_finished' || event === 'verified' || event === 'confirmed') return 'green';
  if (event === 'approved' || event === 'apply_started') return 'amber';
  return 'grey';
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

/** entrySummary is a journal entry's detail in one line, as `airlock ops journal` prints it. */
export function entrySummary(e: Pick<JournalEntryLike, 'event' | 'detail'>): string {
  const d = e.detail ?? {};
  switch (e.event) {
    case 'planned':
      return d.hash ? `hash ${shortHash(str(d.hash))}` : '';
    case 'diff_attached':
      return [d.sha256 ? `sha256 ${shortHash(str(d.sha256))}` : '', d.exit_code !== undefined ? `exit ${str(d.exit_code)}` : '']
        .filter(Boolean)
        .join(' · ');
    case 'approved':
      return [d.ttl ? `valid ${str(d.ttl)}` : '', d.hash ? `hash ${shortHash(str(d.hash))}` : ''].filter(Boolean).join(' · ');
    case 'apply_finished':
    case 'apply_failed':
      return [d.exit_code !== undefined ? `exit ${str(d.exit_code)}${d.duration && d.duration !== '0s' ? ` in ${str(d.duration)}` : ''}` : '', str(d.reason)]
        .filter(Boolean)
        .join(' · ');
    case 'apply_started':
      return d.apply ? str(d.apply) : '';
    case 'verified':
    case 'verify_failed': {
      const list = Array.isArray(d.assertions) ? (d.assertions as { passed?: unknown }[]) : [];
      const passed = list.filter((a) => a.passed === true).length;
      return `${passed}/${list.length} assertions passed`;
    }
    case 'confirmed':
    case 'confirm_failed':
    case 'confirm_withheld':
      return [str(d.command), d.exit_code !== undefined && d.exit_code !== -1 ? `exit ${str(d.exit_code)}` : '', str(d.reason)]
        .filter(Boolean)
        .join(' · ');
  }
  return str(d.reason);
}

/** newestFirst orders journal entries by seq, newest first (without changing the input). */
export function newestFirst<T extends Pick<JournalEntryLike, 'seq'>>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => b.seq - a.seq);
}

/** The fields of the journal's verification this page reads. */
export interface ChainReport {
  entries: number;
  last_seq: number;
  ok: boolean;
  problems?: { kind: string; seq: number; id: number; detail: string }[];
}

/** What the chain's state means for the person, and what to do. */
export interface ChainState {
  state: 'intact' | 'broken' | 'unchecked' | 'empty';
  title: string;
  meaning: string;
  todo: string;
  /** The first entry that can no longer be trusted (broken only). */
  brokenAt?: number;
  problems: string[];
}

const problemWords: Record<string, string> = {
  edited: 'changed after it was written',
  deleted: 'deleted',
  inserted: 'inserted afterwards, not by Airlock',
  reordered: 'moved out of order',
  head: 'the journal’s authenticated end does not match its last entry (entries at the end were removed or added)',
  key: 'signed with a different key than the one in your keyring',
  anchor: 'the anchor file outside the database, which remembers the journal’s end, is missing or was edited',
  truncated: 'entries at the end were removed (the anchor outside the database remembers more)',
  'rolled back':
    'the journal was put back to an older state: the counter kept in your keyring remembers newer entries, which were deleted',
};

// Problems about entries missing at the end name the newest entry that was lost; the
// chain is broken from the first one lost, just after the last entry left.
const lostAtEnd = new Set(['truncated', 'rolled back']);

/**
 * chainState turns the journal check into words: intact, broken at entry N (what it means
 * and what to do), or not checked (the keyring did not answer).
 */
export function chainState(report: ChainReport | undefined | null, verifyError = ''): ChainState {
  if (!report) {
    return {
      state: 'unchecked',
      title: 'Chain not checked',
      meaning: `The journal could not be checked: ${verifyError || 'no answer from the keyring'}. Its entries are shown, but nothing vouches for them.`,
      todo: 'Unlock your keyring (the journal key is kept there) and open Ops again, or run `airlock ops journal --verify` in a terminal.',
      problems: [],
    };
  }
  if (report.ok) {
    if (report.entries === 0) {
      return { state: 'empty', title: 'No entries yet', meaning: 'Nothing has been journaled for this project.', todo: '', problems: [] };
    }
    return {
      state: 'intact',
      title: 'Chain intact',
      meaning: `All ${report.entries} entries are linked, each to the one before, and signed with the key in your keyring: none was edited, removed, inserted or reordered.`,
      todo: '',
      problems: [],
    };
  }
  const problems = report.problems ?? [];
  const from = (p: { kind: string; seq: number }) => (lostAtEnd.has(p.kind) ? Math.min(p.seq, report.last_seq + 1) : p.seq);
  const first = problems.reduce((m, p) => (from(p) > 0 && from(p) < m ? from(p) : m), Number.MAX_SAFE_INTEGER);
  const brokenAt = first === Number.MAX_SAFE_INTEGER ? undefined : first;
  return {
    state: 'broken',
    title: brokenAt !== undefined ? `Chain broken at entry ${brokenAt}` : 'Chain broken',
    meaning:
      'Someone changed the journal outside Airlock: the entries named below no longer match what was written. ' +
      (brokenAt !== undefined ? `Entries from ${brokenAt} on cannot be trusted as a record of what happened.` : 'Its entries cannot be trusted as a record.'),
    todo:
      'Do not delete anything: keep a copy of the database as evidence, compare with a backup, and find out who had access to it. ' +
      'Plans themselves still refuse tokens and drift as before; only the record is in doubt.',
    brokenAt,
    // The core's detail says what is wrong with the row in words; the kind's words stand in without one.
    problems: problems.map((p) => `entry ${p.seq}: ${p.detail || problemWords[p.kind] || p.kind}`),
  };
}

// ---- The token. ----

/**
 * copyText puts text on the clipboard: the browser's clipboard first, the Wails runtime's
 * (the desktop's own clipboard) when the page may not use it. Resolves true when either did.
 */
export async function copyText(text: string, fallback?: (text: string) => Promise<boolean>): Promise<boolean> {
  try {
    if (typeof navigator !== 'undefined' && navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Not allowed here (no user activation, or an insecure origin): try the runtime.
  }
  if (!fallback) return false;
  try {
    return await fallback(text);
  } catch {
    return false;
  }
}

/** TTL choices offered when approving (10 minutes by default, 60 at most). */
export const ttlChoices: readonly { value: string; words: string }[] = [
  { value: '10m', words: '10 minutes' },
  { value: '30m', words: '30 minutes' },
  { value: '60m', words: '60 minutes' },
];

// ---- Events (ops.plan.updated, ops.journal.appended). ----

/** The payload of ops.plan.updated. */
export type PlanEvent = OpsPlanUpdated;

/** The payload of ops.journal.appended. */
export type JournalEvent = OpsJournalAppended;

export { errorText } from './errors';

// ---- An agent waiting for the person's approval of a plan (MCP ops_approve). ----

/**
 * agentRequestsFor lists the pending ops_approve requests of agents for a plan: the
 * popup answers those (and hands the token to the agent), while Approve on this page
 * hands it to the person.
 */
export function agentRequestsFor<T extends { id: string; tool: string; params: string }>(approvals: readonly T[], planId: string): T[] {
  return approvals.filter((a) => {
    if (a.tool !== 'ops_approve') return false;
    try {
      const p: unknown = JSON.parse(a.params);
      return typeof p === 'object' && p !== null && (p as Record<string, unknown>).plan_id === planId;
    } catch {
      return false;
    }
  });
}
