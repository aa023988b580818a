// Times as people read them (UI.md): relative ("in 3 h", "2 min ago"), with the
// absolute time on hover.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** relativeTime says how far then is from now: "just now", "5 min ago", "in 3 h", "2 d ago". */
export function relativeTime(then: Date, now: Date): string {
  const diff = then.getTime() - now.getTime();
  if (Number.isNaN(diff)) return 'unknown time';
  const abs = Math.abs(diff);
  if (abs < 45_000) return diff > 0 ? 'in a moment' : 'just now';
  let amount: string;
  if (abs < HOUR) amount = `${Math.max(1, Math.round(abs / MINUTE))} min`;
  else if (abs < DAY) amount = `${Math.round(abs / HOUR)} h`;
  else if (abs < 60 * DAY) amount = `${Math.round(abs / DAY)} d`;
  else return absoluteTime(then);
  return diff > 0 ? `in ${amount}` : `${amount} ago`;
}

/** absoluteTime is the full local date and time, for hover text. */
export function absoluteTime(d: Date): string {
  if (Number.isNaN(d.getTime())) return 'unknown time';
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
  });
}

/** parseTime reads the RFC 3339 times Go sends; Go's zero time counts as no time. */
export function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value === '' || value.startsWith('0001-01-01')) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}
