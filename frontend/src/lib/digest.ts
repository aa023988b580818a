// The digest card of Waiting for you: what happened while nobody watched (at start, at
// wake), one line per kind, each with the place of the window that shows it.
import type { DigestCard } from './api';

export interface DigestLine {
  key: 'failed' | 'held' | 'missed' | 'paused';
  text: string;
  /** The route that shows these runs ("#/dispatch/runs?status=failed"); none: this page. */
  route?: string;
  /** The link's words. */
  open?: string;
}

function count(n: number, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}

/** digestLines are the card's lines, the most pressing first; none when it tells nothing. */
export function digestLines(d: Pick<DigestCard, 'failed_runs' | 'held_runs' | 'missed_runs' | 'paused_tasks'>): DigestLine[] {
  const out: DigestLine[] = [];
  if (d.failed_runs > 0) {
    out.push({ key: 'failed', text: count(d.failed_runs, 'run failed or was interrupted', 'runs failed or were interrupted'), route: '#/dispatch/runs?status=failed', open: 'Show failed runs' });
  }
  if (d.held_runs > 0) out.push({ key: 'held', text: `${count(d.held_runs, 'run is', 'runs are')} waiting for you (below)` });
  if (d.missed_runs > 0) {
    out.push({ key: 'missed', text: count(d.missed_runs, 'scheduled run did not run', 'scheduled runs did not run'), route: '#/dispatch/runs?status=skipped', open: 'Show skipped runs' });
  }
  const paused = d.paused_tasks ?? [];
  if (paused.length === 1) out.push({ key: 'paused', text: `Task ${paused[0]} paused itself after failing` });
  else if (paused.length > 1) out.push({ key: 'paused', text: `Tasks ${paused.join(', ')} paused themselves after failing` });
  return out;
}

/** showsDigest: a card with an id and something to tell. */
export function showsDigest(d: DigestCard | undefined): d is DigestCard {
  return !!d && d.id > 0 && digestLines(d).length > 0;
}
