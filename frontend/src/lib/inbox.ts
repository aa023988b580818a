// Waiting for you: what the window lists, in which order, and how a request may be answered.
import type { Approval, InboxItem, Scope } from './api';

/**
 * heldItems are the inbox entries that are not a pending approval the window lists with
 * its own row: runs held on a directory or a department, paused runs and tasks, and a
 * run waiting for an approval the broker does not list.
 */
export function heldItems(items: readonly InboxItem[], approvals: readonly Pick<Approval, 'id'>[]): InboxItem[] {
  const ids = new Set(approvals.map((a) => a.id));
  return items.filter((it) => !(it.kind === 'approval' && ids.has(it.key)));
}

/** waitingCount is the badge: every request and every held group needing the person. */
export function waitingCount(approvals: readonly unknown[], held: readonly unknown[]): number {
  return approvals.length + held.length;
}

/** canAllowAlways: only P1 requests that are not interactive-only offer "Allow always". */
export function canAllowAlways(a: Pick<Approval, 'tier' | 'interactive_only' | 'scopes'>): boolean {
  return a.tier === 'P1' && !a.interactive_only && (a.scopes ?? []).some((s) => s !== 'once');
}

/**
 * canAllowSession: a P1 request of an agent session is allowed for the rest of the session
 * by default (it asks the first time only); "Allow once" is the exception beside it.
 */
export function canAllowSession(a: Pick<Approval, 'tier' | 'interactive_only' | 'scopes' | 'session'>): boolean {
  return a.tier === 'P1' && !a.interactive_only && !!a.session && (a.scopes ?? []).includes('session');
}

/** sessionGrant says what "Allow for this session" remembers, before the click. */
export function sessionGrant(a: Pick<Approval, 'tool' | 'session'>): string {
  return `${a.tool} with these parameters, until agent session “${a.session}” ends`;
}

/** needsReview: P2 and interactive-only requests are allowed only after reading the popup. */
export function needsReview(a: Pick<Approval, 'tier' | 'interactive_only'>): boolean {
  return a.tier === 'P2' || a.interactive_only;
}

export interface ScopeChoice {
  scope: Scope;
  label: string;
  /** What the grant covers, said before the click. */
  grants: string;
}

/**
 * alwaysChoices are the remembered scopes a P1 allow may pick, with what each grants
 * (less those in skip: the popup has its own button for the session).
 */
export function alwaysChoices(
  a: Pick<Approval, 'tool' | 'scopes' | 'session' | 'task' | 'department'>,
  skip: readonly Scope[] = [],
): ScopeChoice[] {
  const out: ScopeChoice[] = [];
  const scopes = (a.scopes ?? []).filter((s) => !(skip as readonly string[]).includes(s));
  if (scopes.includes('session') && a.session) {
    out.push({ scope: 'session', label: 'For this session', grants: sessionGrant(a) });
  }
  // A task or a department is offered only when the request has one (a scheduled run's).
  if (scopes.includes('task') && a.task) {
    out.push({ scope: 'task', label: 'For this task', grants: `${a.tool} with these parameters, in every later run of task ${a.task} and no other (revoke in Settings)` });
  }
  if (scopes.includes('department') && a.department) {
    out.push({
      scope: 'department',
      label: 'For this department',
      grants: `${a.tool} with these parameters, for every task and session of department ${a.department} (revoke in Settings)`,
    });
  }
  if (scopes.includes('always')) {
    const where = a.department ? `in department ${a.department}` : 'here';
    out.push({ scope: 'always', label: 'Always', grants: `${a.tool} with these parameters, ${where}, from now on (revoke in Settings)` });
  }
  return out;
}

const operations: Record<string, string> = {
  bash: 'Run a shell command',
  write_file: 'Write a file',
  edit_file: 'Edit a file',
  read_file: 'Read a file',
  list_dir: 'List a directory',
  search_files: 'Search files',
  web_fetch: 'Fetch a web page',
  skill: 'Use a skill',
  memory_query: 'Query memory',
  ops_plan: 'Draft an operation plan',
  ops_apply: 'Apply an operation plan',
  ops_approve: 'Approve an operation plan',
};

const kinds: Record<string, string> = {
  bash_destructive: 'Run a shell command that can destroy data',
  isolation_escalation: 'Run with more access than the sandbox gives',
  ops_approve: 'Approve an operation plan',
  directory_authorization: 'Let runs start in a new directory',
  self_approval: 'Answer one of Airlock’s own questions',
};

/** operationWords says in plain words what a request would do. */
export function operationWords(a: Pick<Approval, 'tool' | 'kind'>): string {
  return (a.kind && kinds[a.kind]) || operations[a.tool] || `Use the tool ${a.tool}`;
}

/** foldText keeps the first maxLines lines (and at most maxChars) of a long value. */
export function foldText(text: string, maxLines = 8, maxChars = 600): { head: string; folded: boolean } {
  let head = text.split('\n').slice(0, maxLines).join('\n');
  if (head.length > maxChars) head = head.slice(0, maxChars);
  return head.length < text.length ? { head: head + ' …', folded: true } : { head: text, folded: false };
}

/** heldTitle is a held group's headline: who wants to start, and where (or what is paused). */
export function heldTitle(it: Pick<InboxItem, 'kind' | 'tasks' | 'runs' | 'dir' | 'asked'>): string {
  const tasks = it.tasks ?? [];
  const who = tasks.length === 0 ? 'A run' : tasks.length === 1 ? tasks[0] : `${tasks.slice(0, -1).join(', ')} and ${tasks[tasks.length - 1]}`;
  switch (it.kind) {
    case 'directory':
      return `${who} ${tasks.length > 1 ? 'want' : 'wants'} to start in`;
    case 'department':
      return `${who} ${tasks.length > 1 ? 'wait' : 'waits'} for a missing department`;
    default:
      return it.asked;
  }
}

/**
 * PopupQueue is the order in which requests are raised in the popup: the pending ones
 * the person has not put aside, oldest first. Put aside (Esc) keeps them pending and
 * listed under Waiting for you; review brings one to the front again.
 */
export class PopupQueue {
  private aside = new Set<string>();
  private front: string | undefined;

  /** queue lists the requests to raise, in order, from the pending list. */
  queue<T extends Pick<Approval, 'id' | 'created_at'>>(pending: readonly T[]): T[] {
    const live = new Set(pending.map((p) => p.id));
    for (const id of this.aside) if (!live.has(id)) this.aside.delete(id);
    if (this.front && !live.has(this.front)) this.front = undefined;
    const list = pending
      .filter((p) => !this.aside.has(p.id))
      .sort((x, y) => String(x.created_at).localeCompare(String(y.created_at)) || x.id.localeCompare(y.id));
    const i = list.findIndex((p) => p.id === this.front);
    if (i > 0) list.unshift(...list.splice(i, 1));
    return list;
  }

  /** putAside hides these requests from the popup; they stay pending. */
  putAside(ids: readonly string[]): void {
    for (const id of ids) this.aside.add(id);
  }

  /** review raises id in the popup, first. */
  review(id: string): void {
    this.aside.delete(id);
    this.front = id;
  }
}

/** coalesce runs fn now, and once more after it if it was asked for again meanwhile. */
export function coalesce(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return run;
}

/** heldReason is why a group is held, without the count and task names the row shows apart. */
export function heldReason(asked: string): string {
  const m = /^\d+ held run\(s\) of [^:]*: (.*)$/s.exec(asked);
  const reason = m?.[1] ?? asked;
  // The core's reason ends with the terminal command; the window offers the button.
  return reason.replace(/: authorize it with `[^`]*`\s*$/, '');
}

/** summaryText is what a request would do, without repeating the tool's name. */
export function summaryText(a: Pick<Approval, 'tool' | 'summary'>): string {
  const prefix = a.tool + ' ';
  return a.summary.startsWith(prefix) && a.summary.length > prefix.length ? a.summary.slice(prefix.length) : a.summary;
}
