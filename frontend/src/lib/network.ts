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
