/**
 * `/storage/v1`: Supabase Storage's wire format (docs/supabase.md, "/storage/v1") as a face on
 * storage (packages/server/src/storage/): the same buckets, the same policies on storage.objects,
 * the same limits, names and signed-URL rules; only the paths, bodies and shapes are Supabase's.
 * What it adds: the routes of routes.ts under /storage/v1, and Supabase's error shape there.
 */
import type { App, CallerGuards } from '../../http/index.js';
import type { Storage } from '../../storage/index.js';
import { registerSupabaseStorageRoutes } from './routes.js';

export interface SupabaseStorageDeps {
  /** Storage as registerStorage opened it: its services and links. */
  storage: Storage;
  /** Who is calling (http/guards.ts), as for storage's own routes. */
  callers: CallerGuards;
}

/**
 * Mounts /storage/v1 on storage's services.
 * @example await registerSupabaseStorage(app, { storage, callers });
 */
export async function registerSupabaseStorage(app: App, deps: SupabaseStorageDeps): Promise<void> {
  await registerSupabaseStorageRoutes(app, deps.callers, deps.storage);
}
