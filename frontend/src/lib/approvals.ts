// Words for where a pending request comes from.
import type { Approval } from './api';

/** origin says who asks: run and task, agent session, department. */
export function origin(a: Pick<Approval, 'run' | 'task' | 'session' | 'department'>): string {
  const parts: string[] = [];
  if (a.run) parts.push(a.task ? `run ${a.run} of “${a.task}”` : `run ${a.run}`);
  else if (a.task) parts.push(`task “${a.task}”`);
  if (a.session) parts.push(`agent session “${a.session}”`);
  if (a.department) parts.push(`dept. ${a.department}`);
  return parts.length > 0 ? `from ${parts.join(' · ')}` : 'from an agent';
}

/** byUrgency orders requests most urgent first: P2, then P1, then P0; older first within a tier. */
export function byUrgency<T extends Pick<Approval, 'tier' | 'created_at'>>(list: readonly T[]): T[] {
  const rank = (t: string) => (t === 'P2' ? 0 : t === 'P1' ? 1 : 2);
  return [...list].sort((x, y) => rank(x.tier) - rank(y.tier) || String(x.created_at).localeCompare(String(y.created_at)));
}
