// The sidebar footer's facts (UI.md): whether dispatch runs and which sandbox backend is
// active. Each says only what the core reports: the sandbox line comes from the start-up
// probes (sandbox.status); the dispatch line from dispatch.state (on, paused, how many
// tasks and running runs), with the Pause / Resume action.
import type { ConfigView, DispatchState, SandboxStatus } from './api';

export interface FooterFact {
  name: string;
  value: string;
  tone: 'ok' | 'warn' | 'idle';
  hint: string;
  /** An action offered beside the fact (the dispatch line's Pause / Resume). */
  action?: 'pause' | 'resume';
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

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** dispatchFact is the footer line for dispatch: on or paused, with the way to toggle it. */
export function dispatchFact(st: DispatchState | undefined): FooterFact {
  if (!st) {
    return { name: 'dispatch', value: 'checking…', tone: 'idle', hint: 'Waiting for the core to say whether dispatch runs.' };
  }
  const running = st.running > 0 ? ` · ${st.running} running` : '';
  if (st.paused) {
    const by = st.paused_by ? ` by ${st.paused_by}` : '';
    const since = st.paused_at ? ` since ${new Date(st.paused_at).toLocaleString()}` : '';
    return {
      name: 'dispatch',
      value: `paused${running}`,
      tone: 'warn',
      hint: `Paused${by}${since}: scheduled runs are skipped until you resume (Run now still works; running runs go on).`,
      action: 'resume',
    };
  }
  if (st.tasks === 0) {
    return {
      name: 'dispatch',
      value: `on${running}`,
      tone: 'idle',
      hint: 'Dispatch is on, but no task has a schedule, so nothing runs on its own.',
      action: 'pause',
    };
  }
  return {
    name: 'dispatch',
    value: `on${running}`,
    tone: 'ok',
    hint: `${plural(st.tasks, 'scheduled task starts', 'scheduled tasks start')} on its own. Pause to skip scheduled runs until you resume.`,
    action: 'pause',
  };
}

/** footerFacts derives the footer from what the core reports (undefined while it loads). */
export function footerFacts(config: ConfigView | undefined, sandbox?: SandboxStatus, dispatch?: DispatchState): FooterFact[] {
  if (!config) {
    return [
      { name: 'core', value: 'connecting…', tone: 'idle', hint: 'Waiting for the first answer of the core.' },
    ];
  }
  const facts: FooterFact[] = [];
  facts.push(dispatchFact(dispatch));
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
