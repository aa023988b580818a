// Words for operation plans.
import type { PlanSummary } from './api';

/** planTarget names what a plan changes: provider, then account, region or device. */
export function planTarget(p: Pick<PlanSummary, 'provider' | 'account' | 'region' | 'device'>): string {
  const rest = [p.account, p.region, p.device].filter((s): s is string => !!s);
  return rest.length > 0 ? `${p.provider} · ${rest.join(' · ')}` : p.provider;
}
