// Typed access to the Settings façade (app/desktop/settingsview.go): edits of
// config.toml that keep the person's comments, the permission tiers, rules and grants,
// and the hooks. Every edit returns fresh data, but the window shows the configuration
// that config.changed brings (App re-reads it on that event), so other editors of the
// file show up the same way.
import * as Facade from '../../wailsjs/go/desktop/Facade';
import type { api as wire } from '../../wailsjs/go/models';
import type { ConfigView } from './api';

export type PermissionsView = wire.PermissionsView;
export type TierRow = wire.TierRow;
export type RuleRow = wire.RuleRow;
export type GrantRow = wire.GrantRecord;
export type HooksView = wire.HooksView;
export type HookRow = wire.HookRow;
export type AgentHook = wire.AgentHook;
export type Profile = wire.Profile;
export type ProfileList = wire.ProfileList;

/** A value config.toml takes from the window. */
export type SettingValue = string | boolean | number | string[];

export interface SettingsApi {
  /** Writes key = value into config.toml; rejects with the reason nothing was written. */
  setSetting(key: string, value: SettingValue): Promise<ConfigView>;
  /** Removes key from config.toml, so the default applies. */
  resetSetting(key: string): Promise<ConfigView>;
  permissions(): Promise<PermissionsView>;
  /** Sets a tool's tier; '' returns it to the default. */
  setTier(tool: string, tier: string): Promise<PermissionsView>;
  addRule(tool: string, pattern: string, action: string): Promise<PermissionsView>;
  /** Removes rule index, which must still be tool + pattern. */
  removeRule(index: number, tool: string, pattern: string): Promise<PermissionsView>;
  revokeGrant(id: string): Promise<PermissionsView>;
  hooks(): Promise<HooksView>;
  /** The built-in profiles and config.toml's own, with the one config.toml chose. */
  profiles(): Promise<ProfileList>;
  /** Takes into force the waiting config.toml that loosens the answer path (config.pending). */
  confirmConfig(digest: string): Promise<ConfigView>;
}

export const settingsApi: SettingsApi = {
  setSetting: (key, value) => Facade.SetSetting(key, value),
  resetSetting: (key) => Facade.ResetSetting(key),
  permissions: () => Facade.PermissionsView(),
  setTier: (tool, tier) => Facade.SetTier(tool, tier),
  addRule: (tool, pattern, action) => Facade.AddRule(tool, pattern, action),
  removeRule: (index, tool, pattern) => Facade.RemoveRule(index, tool, pattern),
  revokeGrant: (id) => Facade.RevokeGrant(id),
  hooks: () => Facade.HooksView(),
  profiles: () => Facade.Profiles(),
  confirmConfig: (digest) => Facade.ConfirmConfig(digest),
};
