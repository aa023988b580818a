// network_access has three values: off, allowlist and on. The core sends the names;
// config.toml (and so a Setting's value) writes them false, "allowlist" and true.
export type NetworkAccess = 'off' | 'allowlist' | 'on';

export const networkChoices: NetworkAccess[] = ['off', 'allowlist', 'on'];

/** networkOf reads any spelling (a name, a boolean, a setting's value); anything else is off. */
export function networkOf(v: unknown): NetworkAccess {
  if (v === true || v === 'on' || v === 'true') return 'on';
  if (v === 'allowlist') return 'allowlist';
  return 'off';
}

/** networkWords says what each value gives a run. */
export const networkWords: Record<NetworkAccess, string> = {
  off: 'no network at all',
  allowlist: "only the allowed domains, through Airlock's egress proxy",
  on: 'may reach the network',
};

/** networkLabel is the short form for policy lines: "network on", "network allowlist (only the allowed domains, …)". */
export function networkLabel(v: unknown): string {
  const n = networkOf(v);
  return n === 'allowlist' ? "network allowlist (only the allowed domains, through Airlock's egress proxy)" : `network ${n}`;
}

/** networkSetting is the value config.toml takes for a choice (false, "allowlist", true). */
export function networkSetting(n: NetworkAccess): boolean | string {
  return n === 'on' ? true : n === 'allowlist' ? 'allowlist' : false;
}

/** The verdict counts of one domain of a run's network summary. */
export interface Verdicts {
  connections: number;
  allowed: number;
  refused: number;
  asked: number;
}

/** verdictWords says how a domain's connections went: "2 allowed", "1 refused, asked you". */
export function verdictWords(d: Verdicts): string {
  const parts: string[] = [];
  if (d.allowed > 0) parts.push(`${d.allowed} allowed`);
  if (d.refused > 0) parts.push(`${d.refused} refused`);
  const words = parts.join(', ');
  if (d.asked === 0) return words;
  return `${words}, ${d.asked === d.connections ? 'asked you' : `${d.asked} asked you`}`;
}

/** durationWords shows a total connection time: "0 ms", "350 ms", "2.4 s", "3 min 5 s". */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
