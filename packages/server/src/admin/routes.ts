import type { App } from '../http/index.js';
import { AdminAccountBody, type createAdminAccountHandlers } from './accounts.js';
import { BackupParams, type createBackupHandlers } from './backups.js';
import type { Guards } from './guard.js';
import type { createMetricsHandler } from './metrics.js';
import { MessageListParams, type createMessageHandlers, PreviewBody, TestEmailBody } from './messages.js';
import { type createAdminSessionHandlers, LoginBody, SetupBody } from './session.js';
import { SavedQueryBody, SavedQueryParams, SavedQueryPatch, type createSavedQueries } from './saved-queries.js';
import { OidcTestParams, OidcTestResultParams, type createSettingsHandlers } from './settings.js';
import { SqlBody, type createSqlRunner } from './sql.js';
import { UserCreateBody, UserIdParams, UserListParams, UserPatchBody, type createUserAdmin } from './users.js';

export interface AdminHandlers {
  session: ReturnType<typeof createAdminSessionHandlers>;
  accounts: ReturnType<typeof createAdminAccountHandlers>;
  backups: ReturnType<typeof createBackupHandlers>;
  sql: ReturnType<typeof createSqlRunner>;
  saved: ReturnType<typeof createSavedQueries>;
  settings: ReturnType<typeof createSettingsHandlers>;
  messages: ReturnType<typeof createMessageHandlers>;
  users: ReturnType<typeof createUserAdmin>;
  metrics: ReturnType<typeof createMetricsHandler>;
}

/**
 * THE route table of every management route (docs/api.md §4): one line per endpoint, the guard
 * on the line, run at `onRequest` so a refused request never has its body parsed.
 * - `manage`: the secret key, or the console's admin cookie (changes: the CSRF rule of §6);
 * - `admin`: the admin cookie only; `origin`: no credential, but only from our own pages.
 * Storage buckets and metrics join this table with `manage`.
 */
export function registerAdminRoutes(app: App, guards: Guards, h: AdminHandlers): void {
  const { manage, admin, origin } = guards;
  const { session, accounts, backups, sql, saved, settings, messages, users, metrics } = h;

  // Console admins (§6)
  app.post('/api/v1/admin/setup', { onRequest: origin, schema: { body: SetupBody } }, session.setup);
  app.post('/api/v1/admin/login', { onRequest: origin, schema: { body: LoginBody } }, session.login);
  app.post('/api/v1/admin/logout', { onRequest: admin }, session.logout);
  app.get('/api/v1/admin/me', { onRequest: admin }, session.me);
  app.get('/api/v1/admin/keys', { onRequest: admin }, session.keys);
  app.post('/api/v1/admins', { onRequest: manage, schema: { body: AdminAccountBody } }, accounts.create);
  app.post('/api/v1/admins/password', { onRequest: manage, schema: { body: AdminAccountBody } }, accounts.setPassword);

  // SQL runner, settings, project (§3)
  app.post('/api/v1/sql', { onRequest: manage, schema: { body: SqlBody } }, sql);
  app.get('/api/v1/sql/saved', { onRequest: manage, schema: { summary: 'The saved queries, by name' } }, saved.list);
  app.post('/api/v1/sql/saved', { onRequest: manage, schema: { summary: 'Save a query', body: SavedQueryBody } }, saved.create);
  app.patch(
    '/api/v1/sql/saved/:id',
    { onRequest: manage, schema: { summary: 'Rename or change a saved query', params: SavedQueryParams, body: SavedQueryPatch } },
    saved.update,
  );
  app.delete(
    '/api/v1/sql/saved/:id',
    { onRequest: manage, schema: { summary: 'Delete a saved query', params: SavedQueryParams } },
    saved.remove,
  );
  app.get('/api/v1/settings/auth', { onRequest: manage }, settings.auth);
  app.patch('/api/v1/settings/auth', { onRequest: manage }, settings.updateAuth);
  app.post('/api/v1/settings/auth/oidc/:id/test', { onRequest: manage, schema: { params: OidcTestParams } }, settings.startOidcTest);
  app.get(
    '/api/v1/settings/auth/oidc/:id/tests/:test_id',
    { onRequest: manage, schema: { params: OidcTestResultParams } },
    settings.oidcTestResult,
  );
  app.get('/api/v1/project', { onRequest: manage }, settings.project);
  app.patch('/api/v1/project', { onRequest: manage }, settings.updateProject);

  // Messages (§3)
  app.get('/api/v1/messages', { onRequest: manage, schema: { querystring: MessageListParams } }, messages.log);
  app.get('/api/v1/dev/inbox', { onRequest: manage, schema: { querystring: MessageListParams } }, messages.devInbox);
  app.post('/api/v1/email/test', { onRequest: manage, schema: { body: TestEmailBody } }, messages.testEmail);
  app.post('/api/v1/email/preview', { onRequest: manage, schema: { body: PreviewBody } }, messages.preview);
  app.get(
    '/api/v1/email/templates/defaults',
    { onRequest: manage, schema: { summary: 'The built-in email templates, by kind' } },
    messages.defaults,
  );

  // End-user administration (§6)
  app.get('/api/v1/users', { onRequest: manage, schema: { querystring: UserListParams } }, users.list);
  app.post('/api/v1/users', { onRequest: manage, schema: { body: UserCreateBody } }, users.create);
  app.get('/api/v1/users/:id', { onRequest: manage, schema: { params: UserIdParams } }, users.get);
  app.patch('/api/v1/users/:id', { onRequest: manage, schema: { params: UserIdParams, body: UserPatchBody } }, users.update);
  app.delete('/api/v1/users/:id', { onRequest: manage, schema: { params: UserIdParams } }, users.remove);
  app.post('/api/v1/users/:id/signout', { onRequest: manage, schema: { params: UserIdParams } }, users.signOut);
  app.post('/api/v1/users/:id/resend-verification', { onRequest: manage, schema: { params: UserIdParams } }, users.resendVerification);

  // Backups of the embedded project (§3; docs/operations.md)
  app.post('/api/v1/backups', { onRequest: manage }, backups.create);
  app.get('/api/v1/backups', { onRequest: manage }, backups.list);
  app.get('/api/v1/backups/:name', { onRequest: manage, schema: { params: BackupParams } }, backups.download);
  // Operations (§8): Prometheus text
  app.get('/metrics', { onRequest: manage }, metrics);
}
