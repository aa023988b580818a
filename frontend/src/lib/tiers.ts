// Permission tiers and the words the UI always uses for them.

export type Tier = 'P0' | 'P1' | 'P2';

export const tierWords: Record<Tier, string> = {
  P0: 'silent',
  P1: 'asks once',
  P2: 'asks every time',
};

/** isTier tells whether a value from the core is a tier. */
export function isTier(v: unknown): v is Tier {
  return v === 'P0' || v === 'P1' || v === 'P2';
}

/** modeClass is the badge style of a sandbox mode (UI.md): read-only blue, workspace-write green, full-access red outline. */
export function modeClass(mode: string): 'mode-ro' | 'mode-ww' | 'mode-full' | 'mode-other' {
  switch (mode) {
    case 'read-only':
      return 'mode-ro';
    case 'workspace-write':
      return 'mode-ww';
    case 'full-access':
    case 'danger-full-access':
      return 'mode-full';
    default:
      return 'mode-other';
  }
}
