// The sidebar footer's facts (UI.md): whether dispatch runs and which sandbox backend is
// active. Each says only what the core reports: the sandbox line comes from the start-up
// probes (sandbox.status); the dispatch line from dispatch.state (on, paused, how many
// tasks and running runs), with the Pause / Resume action.
import type { ConfigView, DispatchState, SandboxStatus } from './api';

export interface FooterFact {
  name: string;
  value: string;
  /** ok is green, warn amber, danger red (the sandbox's "not sandboxed"), idle not known yet. */
  tone: 'ok' | 'warn' | 'danger' | 'idle';
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

const indicatorTones: Record<string, FooterFact['tone']> = { green: 'ok', amber: 'warn', red: 'danger' };

/**
 * sandboxFact is the footer line for the sandbox: the core's indicator (sandbox.Indicate,
 * the same colour and words as the tray icon and `airlock status`): red "not sandboxed"
 * under full-access or the app-only backend, amber when a guarantee is missing, green
 * only when every promise holds.
 */
export function sandboxFact(st: SandboxStatus | undefined): FooterFact {
  if (!st) {
    return { name: 'sandbox', value: 'checking…', tone: 'idle', hint: 'The start-up probes are still running.' };
  }
  const ind = st.indicator;
  const tone = indicatorTones[ind?.level ?? ''];
  if (!ind || !tone) {
    // A core that sends no indicator: never green on a guess.
    return { name: 'sandbox', value: backendName(st.backend) || 'unknown', tone: 'warn', hint: st.error || st.warning || 'The core did not say whether every promise holds.' };
  }
  const reasons = ind.reasons ?? [];
  const hint = tone === 'ok' ? (st.guarantees ?? []).join(' · ') : [...reasons, ind.fix ? `Way out: ${ind.fix}` : ''].filter(Boolean).join(' · ');
  return { name: 'sandbox', value: ind.words, tone, hint };
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

/** SandboxBanner is the window's start-up warning about the sandbox, with the way out. */
export interface SandboxBanner {
  level: 'red' | 'amber';
  title: string;
  reasons: string[];
  fix: string;
  /** key tells one warning from another: a hidden banner comes back when it changes. */
  key: string;
}

/**
 * sandboxBanner is the banner the window raises while the sandbox indicator is not green
 * (the OS sandbox missing or degraded, or full-access): undefined while green or unknown.
 */
export function sandboxBanner(st: SandboxStatus | undefined): SandboxBanner | undefined {
  const ind = st?.indicator;
  if (!ind || (ind.level !== 'red' && ind.level !== 'amber')) return undefined;
  const reasons = ind.reasons ?? [];
  let title = 'The sandbox is degraded: a guarantee is missing on this machine';
  if (ind.level === 'red') {
    title = ind.words === 'sandbox unavailable' ? 'The sandbox is unavailable: runs are refused' : 'Commands are not sandboxed';
  }
  return { level: ind.level, title, reasons, fix: ind.fix ?? '', key: [ind.level, ind.words, ...reasons].join('\n') };
}
