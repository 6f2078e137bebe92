/**
 * Supabase's faces (docs/supabase.md): `/rest/v1`, `/auth/v1`, `/storage/v1`, `/realtime/v1`
 * and `/functions/v1` as Supabase's clients speak them, each a translation onto the same
 * planner, services and hub as Plinth's own API (no second engine, no second copy of a rule).
 * One sub-folder per face; this file is their index.
 */
export { registerSupabaseAuth, type SupabaseAuthDeps } from './auth/index.js';
export { registerSupabaseRest, type SupabaseRestDeps } from './rest/index.js';
export { registerSupabaseStorage, type SupabaseStorageDeps } from './storage/index.js';
export { registerSupabaseRealtime, type SupabaseRealtimeDeps } from './realtime/index.js';
export { registerSupabaseFunctions, type SupabaseFunctionsDeps } from './functions/index.js';
