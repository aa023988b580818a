// How the Settings page presents the effective configuration: grouped, named in words,
// each value with the layer that set it (DESIGN.md §3).
import type { Setting } from './api';

export interface SettingInfo {
  label: string;
  /** What the current value means, when that needs saying. */
  explain?: (value: unknown) => string | undefined;
}

export interface Section {
  id: string;
  title: string;
  keys: string[];
}

export const sections: Section[] = [
  {
    id: 'sandbox',
    title: 'Sandbox',
    keys: [
      'sandbox_mode',
      'sandbox_workspace_write.network_access',
      'sandbox_workspace_write.writable_roots',
      'isolation.protected',
      'isolation.backend',
      'execution_mode',
    ],
  },
  { id: 'approvals', title: 'Approvals', keys: ['approval_policy', 'approvals_reviewer', 'ops.strict'] },
  { id: 'workspace', title: 'Workspace', keys: ['workspace.roots'] },
  {
    id: 'dispatch',
    title: 'Dispatch',
    keys: ['dispatch.concurrency', 'dispatch.run_log_cap', 'dispatch.log_max_age', 'dispatch.log_max_total'],
  },
  { id: 'api', title: 'Local API', keys: ['api.tcp_address'] },
];

const modeMeaning: Record<string, string> = {
  'read-only': 'Runs may read anywhere but write nowhere, and have no network.',
  'workspace-write':
    "Writes only inside the run's own working directory and the writable roots. Reads are never restricted, in any mode.",
  'full-access': 'No restriction at all: this is not a security boundary.',
  'danger-full-access': 'No restriction at all: this is not a security boundary.',
};

const policyMeaning: Record<string, string> = {
  untrusted: 'Asks before every command that is not on the known-safe read-only list.',
  'on-request': 'Asks as the tiers say (P1 once, P2 every time), and for every escalation.',
  'on-failure': 'Runs sandboxed commands unwatched; asks to re-run with more access when one hits the sandbox.',
  never: 'Asks nothing: what would ask at P1 is allowed, P2 and interactive-only requests are denied.',
};

export const settingInfo: Record<string, SettingInfo> = {
  sandbox_mode: { label: 'Mode', explain: (v) => (typeof v === 'string' ? modeMeaning[v] : undefined) },
  'sandbox_workspace_write.network_access': {
    label: 'Network',
    explain: (v) => (v === true ? 'Runs may use the network.' : 'Runs have no network.'),
  },
  'sandbox_workspace_write.writable_roots': {
    label: 'Writable roots',
    explain: () => "Writable in workspace-write, besides each run's own working directory.",
  },
  'isolation.protected': {
    label: 'Protected',
    explain: () => '.git and .airlock are always protected: read-only even inside writable roots.',
  },
  'isolation.backend': {
    label: 'Backend',
    explain: (v) =>
      v === 'auto'
        ? 'The strongest available OS sandbox, falling back to the application layer with a warning.'
        : v === 'os'
          ? 'Refuses to run without an OS sandbox.'
          : v === 'app'
            ? 'Application-layer checks only, no OS confinement.'
            : undefined,
  },
  execution_mode: {
    label: 'Execution mode',
    explain: (v) =>
      v === 'local'
        ? 'Runs on this machine, confined by the sandbox above.'
        : v === 'sandbox'
          ? 'Runs inside a micro-VM; what it installs or writes outside the workspace vanishes afterwards.'
          : v === 'auto'
            ? 'Low-risk commands run here; high-risk ones run in the micro-VM when it is ready, or ask.'
            : undefined,
  },
  approval_policy: { label: 'Approval policy', explain: (v) => (typeof v === 'string' ? policyMeaning[v] : undefined) },
  approvals_reviewer: {
    label: 'Reviewer',
    explain: (v) =>
      v === 'user' ? 'You answer every request.' : v === 'auto_review' ? 'The configured reviewer answers eligible requests.' : undefined,
  },
  'ops.strict': { label: 'Strict ops', explain: (v) => (v === true ? 'Changes to infrastructure go only through the ops flow.' : undefined) },
  'workspace.roots': { label: 'Workspace roots', explain: () => 'Runs may start inside these without asking.' },
  'dispatch.concurrency': { label: 'Runs at once' },
  'dispatch.run_log_cap': { label: 'Log size per run' },
  'dispatch.log_max_age': { label: 'Keep logs for' },
  'dispatch.log_max_total': { label: 'Logs in total' },
  'api.tcp_address': { label: 'Loopback TCP', explain: (v) => (v === '' ? 'Only the private unix socket listens.' : undefined) },
};

/** label is the setting's name in words; unknown keys keep their key. */
export function label(key: string): string {
  return settingInfo[key]?.label ?? key;
}

/** formatValue shows a value as text: lists joined, booleans as on/off, nothing as "none". */
export function formatValue(key: string, value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(String).join(', ');
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === '' || value === null || value === undefined) return key === 'api.tcp_address' ? 'off' : 'not set';
  if (key === 'dispatch.log_max_age' && typeof value === 'string') return humanDuration(value);
  return String(value);
}

/** humanDuration turns Go durations such as "720h" into words ("30 days"). */
export function humanDuration(d: string): string {
  const m = /^(\d+)h$/.exec(d);
  if (!m) return d;
  const hours = Number(m[1]);
  if (hours % 24 === 0) return `${hours / 24} days`;
  return `${hours} hours`;
}

/** layerLabel says who set a value, in the words the UI uses ("set by: config.toml"). */
export function layerLabel(s: Pick<Setting, 'layer' | 'detail'>): string {
  switch (s.layer) {
    case 'default':
      return 'default';
    case 'file':
      return 'config.toml';
    case 'env':
      return s.detail ? `env ${s.detail}` : 'environment';
    case 'flag':
      return s.detail ? `flag ${s.detail}` : 'command-line flag';
    default:
      return s.layer;
  }
}

/** overriddenNote says, for a value set above config.toml, that editing the file will not change it. */
export function overriddenNote(s: Pick<Setting, 'layer' | 'detail'>): string | undefined {
  if (s.layer === 'env') return `${s.detail ?? 'An environment variable'} wins over config.toml until it is unset.`;
  if (s.layer === 'flag') return `The ${s.detail ?? 'command-line flag'} wins over config.toml while it is given.`;
  return undefined;
}

export interface SectionRows {
  section: Section;
  rows: Setting[];
}

/** group orders settings by section; keys no section names go to a last "Other" section. */
export function group(settings: Setting[]): SectionRows[] {
  const byKey = new Map(settings.map((s) => [s.key, s]));
  const used = new Set<string>();
  const out: SectionRows[] = [];
  for (const section of sections) {
    const rows: Setting[] = [];
    for (const k of section.keys) {
      const s = byKey.get(k);
      if (s) {
        rows.push(s);
        used.add(k);
      }
    }
    if (rows.length > 0) out.push({ section, rows });
  }
  const rest = settings.filter((s) => !used.has(s.key));
  if (rest.length > 0) out.push({ section: { id: 'other', title: 'Other', keys: rest.map((s) => s.key) }, rows: rest });
  return out;
}
