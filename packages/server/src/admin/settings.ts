import { AUTH_DOCS, enabledProviders } from '../auth/index.js';
import type { Guards } from './guard.js';
import type { App } from '../http/server.js';
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
 * `GET/PATCH /api/v1/settings/auth`, `GET/PATCH /api/v1/project` (secret key) and the public
 * `GET /v1/auth/settings` (enabled methods and providers, no secrets).
 * @example registerSettingsRoutes(app, { settings, guards })
 */
export function registerSettingsRoutes(app: App, deps: { settings: SettingsStore; guards: Guards }) {
  const { settings, guards } = deps;
  app.get('/api/v1/settings/auth', { preHandler: guards.service }, async () => maskSecrets(settings.auth()));
  app.patch('/api/v1/settings/auth', { preHandler: guards.service }, async (req) => maskSecrets(await settings.updateAuth(req.body)));
  app.get('/api/v1/project', { preHandler: guards.service }, async () => settings.project());
  app.patch('/api/v1/project', { preHandler: guards.service }, async (req) => settings.updateProject(req.body));
  app.get('/v1/auth/settings', { schema: AUTH_DOCS.settings }, async () => {
    const s = settings.auth();
    return {
      email_password_enabled: s.email_password_enabled,
      magic_link_enabled: s.magic_link_enabled,
      phone_enabled: s.phone_enabled,
      min_password_length: s.min_password_length,
      require_email_confirmation: s.require_email_confirmation,
      // Enabled implies configured: the settings refuse `enabled` without the credentials.
      providers: enabledProviders(s.providers),
      passkeys: 'coming_soon' as const,
    };
  });
}
