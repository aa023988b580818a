// The edits a tab makes to config.toml: one key at a time, each with "saving…" and its
// own error, reactive for the template. Values are not held here: the tab shows what
// config.changed brings.
import { Edits } from '../../lib/settings';
import type { SettingsApi, SettingValue } from '../../lib/api-settings';

export interface SettingEditor {
  busy(key: string): boolean;
  error(key: string): string | undefined;
  set(key: string, value: SettingValue): void;
  reset(key: string): void;
}

/** settingEditor edits through api() (a getter, so a tab's api prop may change). */
export function settingEditor(api: () => SettingsApi): SettingEditor {
  let version = $state(0);
  const edits = new Edits(() => version++);
  return {
    busy(key) {
      void version;
      return edits.busy.has(key);
    },
    error(key) {
      void version;
      return edits.errors.get(key);
    },
    set(key, value) {
      void edits.run(key, () => api().setSetting(key, value));
    },
    reset(key) {
      void edits.run(key, () => api().resetSetting(key));
    },
  };
}
