// The sidebar footer's facts (UI.md): whether dispatch runs and which sandbox backend is
// active. Each says only what the core reports: until the core reports dispatch state
// (dispatch.state) or sandbox probes (sandbox.status), the footer says so in words.
import type { ConfigView } from './api';

export interface FooterFact {
  name: string;
  value: string;
  tone: 'ok' | 'warn' | 'idle';
  hint: string;
}

/** footerFacts derives the footer from what the core reports (undefined while it loads). */
export function footerFacts(config: ConfigView | undefined): FooterFact[] {
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
  facts.push({
    name: 'sandbox',
    value: 'not checked yet',
    tone: 'idle',
    hint: 'This build does not probe the sandbox backends (bubblewrap, Landlock, seccomp) yet.',
  });
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
