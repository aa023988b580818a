// How the Settings page presents the effective configuration: grouped, named in words,
// each value with the layer that set it.
import type { Setting } from './api';
import { errorText } from './errors';
import { networkChoices, networkOf, networkWords } from './network';

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
  { id: 'profile', title: 'Profile', keys: ['profile'] },
  {
    id: 'sandbox',
    title: 'Sandbox',
    keys: [
      'sandbox_mode',
      'sandbox_workspace_write.network_access',
      'network.allowed_domains',
      'network.denied_domains',
      'network.ask_unknown',
      'network.allow_local',
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
  'read-only': 'Runs may read anywhere but your credentials, write nowhere, and have no network.',
  'workspace-write':
    "Writes only inside the run's own working directory and the writable roots. Reads are open everywhere but your credentials (~/.ssh, ~/.aws, …), hidden in every mode.",
  'full-access': 'No restriction at all: this is not a security boundary.',
  'danger-full-access': 'No restriction at all: this is not a security boundary.',
};

const policyMeaning: Record<string, string> = {
  untrusted: 'Asks before every command that is not on the known-safe read-only list.',
  'on-request': 'Asks as the tiers say (P1 once, P2 every time), and for every escalation.',
  'on-failure': 'Runs sandboxed commands unwatched; asks to re-run with more access when one hits the sandbox.',
  never: 'Asks nothing and holds no run: what would ask at P1 is allowed; P2 and interactive-only requests are denied at once, with the reason.',
};

export const settingInfo: Record<string, SettingInfo> = {
  profile: { label: 'Permission profile', explain: (v) => (v ? 'Its settings apply beneath the keys written in config.toml.' : 'None: the keys and the defaults apply.') },
  sandbox_mode: { label: 'Mode', explain: (v) => (typeof v === 'string' ? modeMeaning[v] : undefined) },
  'sandbox_workspace_write.network_access': {
    label: 'Network',
    explain: (v) =>
      networkOf(v) === 'on'
        ? 'Runs may use the network.'
        : networkOf(v) === 'allowlist'
          ? "Runs reach only the allowed domains, through Airlock's egress proxy (web_fetch and the micro-VM get no network)."
          : 'Runs have no network.',
  },
  'network.allowed_domains': { label: 'Allowed domains', explain: () => 'What an allowlist run may reach (*.example.com includes example.com).' },
  'network.denied_domains': { label: 'Denied domains', explain: () => 'Always refused, whatever the allowed domains say.' },
  'network.ask_unknown': { label: 'Ask about unknown domains', explain: () => 'An unlisted domain asks you instead of failing.' },
  'network.allow_local': {
    label: 'Local destinations',
    explain: (v) =>
      v === true
        ? "Dangerous: allowlist runs may reach this machine's own services and your local network."
        : 'Loopback, private and link-local addresses are refused (after DNS).',
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
  'dispatch.concurrency': {
    label: 'Runs at once',
    explain: (v) => `At most ${String(v)} scheduled run${v === 1 ? '' : 's'} at a time; the others wait their turn (a held run gives its slot back).`,
  },
  'dispatch.run_log_cap': { label: 'Log size per run', explain: () => "A run's log stops growing past this size, with a marker saying it was cut." },
  'dispatch.log_max_age': { label: 'Keep logs for', explain: () => 'Older run logs are deleted; the records of the runs stay.' },
  'dispatch.log_max_total': { label: 'Logs in total', explain: () => 'When all run logs together pass this size, the oldest are deleted first.' },
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
    case 'profile':
      return s.detail || 'a profile';
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

// ---- Settings as tabs (UI.md: Approvals, Sandbox, Permissions, Hooks) -------------------

export const settingsTabs = [
  { id: 'general', title: 'General' },
  { id: 'approvals', title: 'Approvals' },
  { id: 'sandbox', title: 'Sandbox' },
  { id: 'permissions', title: 'Permissions' },
  { id: 'hooks', title: 'Hooks' },
] as const;

export type SettingsTab = (typeof settingsTabs)[number]['id'];

/** tabFromHash reads "#/settings/sandbox" as "sandbox"; anything else is the General tab. */
export function tabFromHash(hash: string): SettingsTab {
  const parts = hash.replace(/^#\/?/, '').split(/[?]/)[0]!.split('/');
  if (parts[0] !== 'settings') return 'general';
  const found = settingsTabs.find((t) => t.id === parts[1]);
  return found ? found.id : 'general';
}

/** hashForTab is the hash that opens a Settings tab. */
export function hashForTab(tab: SettingsTab): string {
  return tab === 'general' ? '#/settings' : `#/settings/${tab}`;
}

/** settingOf finds a key's effective setting in a configuration view. */
export function settingOf(settings: Setting[] | undefined, key: string): Setting | undefined {
  return settings?.find((s) => s.key === key);
}

/** One option of a choice, with what it means in plain words. */
export interface Choice {
  value: string;
  label: string;
  meaning: string;
  /** Why the option cannot be chosen now (it is shown disabled with this sentence). */
  disabled?: string;
}

export const modeChoices: Choice[] = [
  { value: 'workspace-write', label: 'workspace-write', meaning: "Writes only inside the run's own working directory and the writable roots." },
  { value: 'read-only', label: 'read-only', meaning: modeMeaning['read-only']! },
  { value: 'full-access', label: 'full-access', meaning: modeMeaning['full-access']! },
];

/** The three network_access choices (values as the core names them; config.toml writes false, "allowlist", true). */
export const networkChoiceList: Choice[] = networkChoices.map((n) => ({ value: n, label: n, meaning: networkWords[n] }));

export const policyChoices: Choice[] = [
  { value: 'untrusted', label: 'untrusted', meaning: policyMeaning.untrusted! },
  { value: 'on-request', label: 'on-request', meaning: policyMeaning['on-request']! },
  { value: 'on-failure', label: 'on-failure', meaning: policyMeaning['on-failure']! },
  { value: 'never', label: 'never', meaning: policyMeaning.never! },
];

export const reviewerChoices: Choice[] = [
  { value: 'user', label: 'you', meaning: 'Every request that asks comes to you: the popup, the tray, a notification or the terminal.' },
  {
    value: 'auto_review',
    label: 'auto_review',
    meaning:
      'Eligible requests go to the reviewer command of [reviewer] in config.toml (JSON in, a decision out); critical risk is always denied, a failure falls back to you. Interactive-only requests always come to you.',
  },
];

export const backendChoices: Choice[] = [
  { value: 'auto', label: 'auto', meaning: 'The strongest OS sandbox this machine has; without one, runs continue under the application layer with a loud warning.' },
  { value: 'os', label: 'os', meaning: 'Refuses to run anything without an OS sandbox (bubblewrap, Landlock or Seatbelt).' },
  { value: 'app', label: 'app', meaning: "Only Airlock's own checks of paths and commands: processes are not confined by the operating system." },
];

/** The sentence the execution mode shows until the micro-VM is ready. */
export const vmMissing = 'the micro-VM runtime is not installed';

/** executionChoices are local, sandbox and auto; the last two need the micro-VM. */
export function executionChoices(vmReady: boolean): Choice[] {
  const need = vmReady ? undefined : `Needs the micro-VM: ${vmMissing}.`;
  return [
    { value: 'local', label: 'local', meaning: 'Runs on this machine, confined by the sandbox above.' },
    {
      value: 'sandbox',
      label: 'sandbox',
      meaning: 'Runs inside a micro-VM; what it installs or writes outside the workspace vanishes when the run ends.',
      disabled: need,
    },
    {
      value: 'auto',
      label: 'auto',
      meaning: 'Low-risk commands run here; high-risk ones (P2, unknown installers, curl | sh) run in the micro-VM, or ask.',
      disabled: need,
    },
  ];
}

/** A warning the Sandbox and Approvals tabs show in words, red. */
export interface Danger {
  id: string;
  text: string;
}

/** dangers lists the risky combinations of the effective settings (UI.md: a red warning line in words). */
export function dangers(settings: Setting[] | undefined): Danger[] {
  const mode = settingOf(settings, 'sandbox_mode')?.value;
  const policy = settingOf(settings, 'approval_policy')?.value;
  const network = networkOf(settingOf(settings, 'sandbox_workspace_write.network_access')?.value) === 'on';
  const backend = settingOf(settings, 'isolation.backend')?.value;
  const full = mode === 'full-access' || mode === 'danger-full-access';
  const out: Danger[] = [];
  if (full && policy === 'never') {
    out.push({
      id: 'full-access-never',
      text: 'full-access with approval policy never: runs may change anything on this machine, and nothing asks you first.',
    });
  } else if (full) {
    out.push({ id: 'full-access', text: 'full-access: runs are not confined at all; this is not a security boundary.' });
  }
  if (network && policy === 'never' && !full) {
    out.push({
      id: 'network-never',
      text: 'Network on with approval policy never: runs may send what they can read anywhere, and nothing asks you first.',
    });
  }
  if (settingOf(settings, 'network.allow_local')?.value === true) {
    out.push({
      id: 'allow-local',
      text: "Local destinations allowed: allowlist runs may reach this machine's own services (anything listening on loopback) and your local network through the proxy.",
    });
  }
  if (backend === 'app' && !full) {
    out.push({ id: 'backend-app', text: "Backend app: only Airlock's own checks apply; processes are not confined by the operating system." });
  }
  return out;
}

/** editNote says, for a value set above config.toml, that an edit here waits for that layer to go. */
export function editNote(s: Pick<Setting, 'layer' | 'detail'> | undefined): string | undefined {
  if (!s) return undefined;
  if (s.layer === 'env')
    return `Set by the environment variable ${s.detail ?? ''}: a change here is written to config.toml, but takes effect only once the variable is unset.`.replace('  ', ' ');
  if (s.layer === 'flag')
    return `Set by the command-line flag ${s.detail ?? ''}: a change here is written to config.toml, but takes effect only when Airlock starts without it.`.replace(
      '  ',
      ' ',
    );
  return undefined;
}

/** asList reads a list setting's value. */
export function asList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** checkPath says what is wrong with a path typed for writable roots or workspace roots. */
export function checkPath(p: string): string | undefined {
  const t = p.trim();
  if (t === '') return 'Type a directory.';
  if (!(t.startsWith('/') || t === '~' || t.startsWith('~/'))) return `“${t}” is not a full path: start it with / or ~/.`;
  return undefined;
}

/** checkProtected says what is wrong with a protected path (a name like secrets/ or a full path). */
export function checkProtected(p: string): string | undefined {
  const t = p.trim();
  if (t === '') return 'Type a name (like secrets/) or a path.';
  if (t === '.git' || t === '.airlock') return `${t} is always protected.`;
  return undefined;
}

/** checkDomain checks a [network] rule as far as the window can; the core parses it with the egress proxy's rules and names what is wrong. */
export function checkDomain(d: string): string | undefined {
  const t = d.trim();
  if (t === '') return 'Type a domain (example.com), a wildcard (*.example.com, which includes example.com) or an address.';
  if (/[\s/]/.test(t) || t.includes('://')) return 'A domain only, without a scheme or a path (api.example.com, not https://api.example.com/v1).';
  return undefined;
}

/** withItem adds item to list (trimmed, once); withoutItem removes it. */
export function withItem(list: string[], item: string): string[] {
  const t = item.trim();
  return t === '' || list.includes(t) ? list : [...list, t];
}

export function withoutItem(list: string[], item: string): string[] {
  return list.filter((x) => x !== item);
}

/** Always protected, whatever the configuration says. */
export const alwaysProtected = ['.git', '.airlock'];

/** tierWords says what a tier does. */
export function tierMeaning(tier: string): string {
  switch (tier) {
    case 'P0':
      return 'runs silently';
    case 'P1':
      return 'asks the first time, then remembers your Allow always';
    case 'P2':
      return 'asks every time; never remembered';
    default:
      return '';
  }
}

/** Where a remembered grant applies, in words. */
export function grantWhere(g: { scope: string; session?: string; task?: string; department?: string; workspace?: string }): string {
  if (g.scope === 'session') return g.session ? `this session only (${g.session})` : 'this session only';
  if (g.scope === 'task') return `every run of task ${g.task ?? ''}`.trimEnd();
  if (g.scope === 'department') return `every task of department ${g.department ?? ''}`.trimEnd();
  if (g.department) return `always, in department ${g.department}`;
  if (g.workspace) return `always, in ${g.workspace}`;
  return 'always, everywhere';
}

/** ruleMeaning says a rule in words. */
export function ruleMeaning(r: { tool: string; pattern: string; action: string }): string {
  const what = r.pattern ? `${r.tool} matching “${r.pattern}”` : `every ${r.tool} call`;
  switch (r.action) {
    case 'allow':
      return `${what} runs without asking (a deny rule still wins)`;
    case 'ask':
      return `${what} asks you`;
    case 'deny':
      return `${what} is refused, whatever else says`;
    default:
      return what;
  }
}

/** describeError turns a rejected façade call into its message. */
export { errorText as describeError } from './errors';

/**
 * Edits tracks the edits in flight and the last error of each key, so a row shows
 * "saving…" and its own error (for example "config.toml changed on disk; reload and try
 * again"). It does not hold values: the window shows what config.changed brings.
 */
export class Edits {
  busy = new Set<string>();
  errors = new Map<string, string>();

  constructor(private readonly changed: () => void = () => {}) {}

  async run(key: string, action: () => Promise<unknown>): Promise<boolean> {
    if (this.busy.has(key)) return false;
    this.busy.add(key);
    this.errors.delete(key);
    this.changed();
    try {
      await action();
      return true;
    } catch (err) {
      this.errors.set(key, errorText(err));
      return false;
    } finally {
      this.busy.delete(key);
      this.changed();
    }
  }
}
