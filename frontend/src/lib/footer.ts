// The sidebar footer's facts (UI.md): whether dispatch runs and which sandbox backend is
// active. Each says only what the core reports: the sandbox line comes from the start-up
// probes (sandbox.status); until the core hosts dispatch (dispatch.state), that line says
// no task is scheduled.
import type { ConfigView, SandboxStatus } from './api';

export interface FooterFact {
  name: string;
  value: string;
  tone: 'ok' | 'warn' | 'idle';
  hint: string;
}

const backendNames: Record<string, string> = {
  bwrap: 'bubblewrap',
  landlock: 'Landlock',
  seatbelt: 'Seatbelt',
  app: 'app layer only',
};

/** backendName is a backend in words ("bwrap" → "bubblewrap"). */
export function backendName(backend: string): string {
  return backendNames[backend] ?? backend;
}

/** sandboxFact is the footer line for the sandbox: the backend, amber when degraded. */
export function sandboxFact(st: SandboxStatus | undefined): FooterFact {
  if (!st) {
    return { name: 'sandbox', value: 'checking…', tone: 'idle', hint: 'The start-up probes are still running.' };
  }
  if (st.error) return { name: 'sandbox', value: 'unavailable', tone: 'warn', hint: st.error };
  const value = backendName(st.backend);
  if (st.backend === 'app' || st.warning) {
    return { name: 'sandbox', value, tone: 'warn', hint: st.warning || 'No OS sandbox: only the application layer checks commands.' };
  }
  return { name: 'sandbox', value, tone: 'ok', hint: (st.guarantees ?? []).join(' · ') };
}

/** footerFacts derives the footer from what the core reports (undefined while it loads). */
export function footerFacts(config: ConfigView | undefined, sandbox?: SandboxStatus): FooterFact[] {
  if (!config) {
    return [
      { name: 'core', value: 'connecting…', tone: 'idle', hint: 'Waiting for the first answer of the core.' },
    ];
  }
  const facts: FooterFact[] = [];
  facts.push({
    name: 'dispatch',
    value: 'no tasks yet',
    tone: 'idle',
    hint: 'No task is scheduled in this Airlock, so nothing runs on its own.',
  });
  facts.push(sandboxFact(sandbox));
  if (config.error) {
    facts.push({
      name: 'config',
      value: 'error in config.toml',
      tone: 'warn',
      hint: 'config.toml is broken; the last good configuration is in force. See Settings.',
    });
  }
  return facts;
}
