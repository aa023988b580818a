// Permission profiles in words, for the pickers (Settings, the department and task
// editors): what a profile sets, in one line.
import type { api as wire } from '../../wailsjs/go/models';

export type Profile = wire.Profile;

/** profileSummary says what p sets; what it leaves is left to the layers beneath. */
export function profileSummary(p: Pick<Profile, 'sandbox_mode' | 'approval_policy' | 'approvals_reviewer' | 'network' | 'tiers'>): string {
  const parts: string[] = [];
  if (p.sandbox_mode) parts.push(p.sandbox_mode);
  if (p.network) parts.push(`network ${p.network}`);
  if (p.approval_policy) parts.push(`approval ${p.approval_policy}`);
  if (p.approvals_reviewer) parts.push(`reviewer ${p.approvals_reviewer}`);
  const tiers = p.tiers ?? {};
  const tools = Object.keys(tiers).sort();
  if (tools.length > 0) {
    const bash = tiers['bash'];
    const counts = ['P0', 'P1', 'P2'].map((t) => [t, tools.filter((k) => tiers[k] === t).length] as const).filter(([, n]) => n > 0);
    parts.push(`tiers: ${bash ? `bash ${bash}; ` : ''}${counts.map(([t, n]) => `${n} at ${t}`).join(', ')}`);
  }
  return parts.length > 0 ? parts.join(' · ') : 'sets nothing';
}
