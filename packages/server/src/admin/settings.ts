import type { FastifyRequest } from 'fastify';
import { MASK, type AuthSettings, type SettingsStore } from '../settings/index.js';

/** Settings as sent over HTTP: every secret replaced by the mask. */
export function maskSecrets(s: AuthSettings): AuthSettings {
  const out = structuredClone(s);
  for (const p of Object.values(out.providers) as unknown as Array<Record<string, unknown>>) {
    if (p.client_secret) p.client_secret = MASK;
    if (p.private_key) p.private_key = MASK;
  }
  return out;
}

/**
 * `GET/PATCH /api/v1/settings/auth`, `GET/PATCH /api/v1/project` (management). Mounted by routes.ts.
 * @example const h = createSettingsHandlers(settings); app.get('/api/v1/project', { onRequest: guards.manage }, h.project)
 */
export function createSettingsHandlers(
  settings: SettingsStore,
  runtime: { database: 'pglite' | 'postgres'; emailDelivery: 'smtp' | 'dev_inbox'; smsConfigured: boolean },
) {
  return {
    auth: async () => maskSecrets(settings.auth()),
    updateAuth: async (req: FastifyRequest) => maskSecrets(await settings.updateAuth(req.body)),
    // Plus what the console shows beside the plan: which database, where mail and SMS go (read-only).
    project: async () => ({
      ...settings.project(),
      database: runtime.database,
      email_delivery: runtime.emailDelivery,
      sms_configured: runtime.smsConfigured,
    }),
    updateProject: async (req: FastifyRequest) => settings.updateProject(req.body),
  };
}
