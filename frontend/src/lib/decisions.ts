// How a run's permission decisions (the audit rows of its requests) read in its view:
// who answered — or that nobody did — and what came of the call afterwards.
import type { api } from '../../wailsjs/go/models';

/** One decision as the core lists it (api.AuditRecord). */
export type Decision = Omit<api.AuditRecord, 'convertValues'>;

/** answeredWords says who answered, in words; nobody answering says why. */
export function answeredWords(d: Pick<Decision, 'verdict' | 'answered_by' | 'layer'>): string {
  switch (d.answered_by) {
    case 'handed-over':
      return "handed to the agent's own prompt: nobody answered in Airlock";
    case 'expired':
      return 'expired: nobody answered before its deadline';
    case 'unattended':
      return 'nobody could answer in Airlock';
    case '':
    case undefined:
      return `by ${d.layer || 'policy'}`;
  }
  return `by ${d.answered_by}`;
}

/** ranWords says what the agent reported after the decision ("" for nothing reported). */
export function ranWords(d: Pick<Decision, 'ran' | 'ran_error'>): string {
  if (d.ran === 'ran') return 'ran';
  if (d.ran === 'failed') return d.ran_error ? `failed: ${d.ran_error}` : 'failed';
  return '';
}
