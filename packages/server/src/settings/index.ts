/**
 * Per-project settings: auth settings and plan (docs/api.md §4), project keys.
 * Adds: tables none (uses plinth.kv); error codes invalid_settings, paid_plan_required.
 */
export { createSettingsStore } from './store.js';
export { defaultAuthSettings, MASK } from './defaults.js';
export { loadOrCreateKeys, readDatabaseKeys, readKeysFile, withConfigured } from './keys.js';
export type * from './types.js';
