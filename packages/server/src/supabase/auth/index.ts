/**
 * `/auth/v1`: GoTrue's (Supabase Auth's) wire format on Plinth's auth services (docs/supabase.md,
 * "/auth/v1"). What this face adds: GoTrue's paths, request fields, user and session shapes,
 * and error codes (errors.ts); what it never adds is a rule: every sign-in goes through the
 * session service's signInWith, every account write through auth's accounts, and the routes
 * share /v1/auth's guards and per-IP request limit (auth.mountFace).
 */
import { acceptForms } from '../../auth/index.js';
import type { App } from '../../http/index.js';
import { createAdminHandlers } from './admin.js';
import { sendGoTrueError } from './errors.js';
import { createFaceHandlers, type FaceDeps, registerFaceRoutes } from './routes.js';

export type SupabaseAuthDeps = FaceDeps;

/**
 * Mounts /auth/v1 in a scope of its own (GoTrue's error shapes, /v1/auth's request limit).
 * @example await registerSupabaseAuth(app, { auth, db, settings });
 */
export async function registerSupabaseAuth(_app: App, deps: SupabaseAuthDeps): Promise<void> {
  const handlers = createFaceHandlers(deps);
  const admin = createAdminHandlers(deps);
  await deps.auth.mountFace((scope) => {
    scope.setErrorHandler((err, req, reply) => sendGoTrueError(err, req, reply));
    // auth-js sends `Content-Type: application/json` with no body (sign-out, reauthenticate):
    // an empty body is no body, anything else Fastify's own (poisoning-safe) JSON parser reads.
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
      if (body === '') done(null, undefined);
      else json(req, body as string, done);
    });
    registerFaceRoutes(scope, deps.auth.guards, deps.callers.service, handlers, admin);
    // Apple answers /callback with a form post: forms are read in this one route's scope only.
    scope.register(async (forms) => {
      acceptForms(forms as unknown as App);
      forms.post('/auth/v1/callback', {}, handlers.callback);
    });
  });
}
