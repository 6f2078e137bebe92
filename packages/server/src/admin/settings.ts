import type { OidcTestResult } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { MASK, type AuthSettings, type SettingsStore } from '../settings/index.js';

/** The auth area's test sign-ins of `oidc_providers` (handed in by app.ts). */
export interface OidcTestHooks {
  start(id: string): Promise<{ url: string; test_id: string; result_url: string; expires_in: number }>;
  result(id: string, testId: string): Promise<OidcTestResult>;
}

export const OidcTestParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const OidcTestResultParams = Type.Object({ id: Type.String({ maxLength: 64 }), test_id: Type.String({ maxLength: 64 }) });

/** Settings as sent over HTTP: every secret replaced by the mask. */
export function maskSecrets(s: AuthSettings): AuthSettings {
  const out = structuredClone(s);
  for (const p of Object.values(out.providers) as unknown as Array<Record<string, unknown>>) {
    if (p.client_secret) p.client_secret = MASK;
    if (p.private_key) p.private_key = MASK;
  }
  for (const p of out.oidc_providers) if (p.client_secret) p.client_secret = MASK;
  if (out.hooks?.send_email_secrets) out.hooks.send_email_secrets = MASK;
  if (out.hooks?.send_sms_secrets) out.hooks.send_sms_secrets = MASK;
  return out;
}

/** The auth settings' body less the read-only fields GET adds. */
function withoutReadOnly(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { managed: _managed, managed_by: _managedBy, ...rest } = body as Record<string, unknown>;
  return rest;
}

/**
 * `GET/PATCH /api/v1/settings/auth`, `GET/PATCH /api/v1/project` (management). Mounted by routes.ts.
 * @example const h = createSettingsHandlers(settings); app.get('/api/v1/project', { onRequest: guards.manage }, h.project)
 */
export function createSettingsHandlers(
  settings: SettingsStore,
  runtime: { database: 'pglite' | 'postgres'; emailDelivery: 'smtp' | 'dev_inbox'; smsConfigured: boolean },
  oidcTests: OidcTestHooks,
) {
  return {
    // `managed`: the keys plinth.json sets (read-only here, 409 managed_by_config on a PATCH) and its path.
    auth: async () => ({
      ...maskSecrets(settings.auth()),
      managed: settings.managed()?.keys ?? [],
      managed_by: settings.managed()?.file ?? null,
    }),
    // What GET adds and no client sets (`managed`, `managed_by`) is dropped, so a client that saves
    // back the document it read (the console, the OIDC test's round trip) keeps working.
    updateAuth: async (req: FastifyRequest) => maskSecrets(await settings.updateAuth(withoutReadOnly(req.body))),
    // Plus what the console shows beside the plan: which database, where mail and SMS go (read-only).
    project: async () => ({
      ...settings.project(),
      database: runtime.database,
      email_delivery: runtime.emailDelivery,
      sms_configured: runtime.smsConfigured,
    }),
    updateProject: async (req: FastifyRequest) => settings.updateProject(req.body),
    /** POST /api/v1/settings/auth/oidc/{id}/test: the URL of a test sign-in (docs/api.md). */
    startOidcTest: async (req: FastifyRequest<{ Params: typeof OidcTestParams.static }>) => oidcTests.start(req.params.id),
    /** GET /api/v1/settings/auth/oidc/{id}/tests/{test_id}: what the provider sent. */
    oidcTestResult: async (req: FastifyRequest<{ Params: typeof OidcTestResultParams.static }>) =>
      oidcTests.result(req.params.id, req.params.test_id),
  };
}
