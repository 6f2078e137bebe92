import type { App } from '../http/index.js';
import { AdminAccountBody, type createAdminAccountHandlers } from './accounts.js';
import { AuditParams, type createAuditLog } from './audit.js';
import { BackupParams, type createBackupHandlers } from './backups.js';
import type { Guards } from './guard.js';
import type { createMetricsHandler } from './metrics.js';
import { MessageListParams, type createMessageHandlers, PreviewBody, TestEmailBody } from './messages.js';
import { type createAdminSessionHandlers, LoginBody, SetupBody, SetupCheckBody } from './session.js';
import { SavedQueryBody, SavedQueryParams, SavedQueryPatch, type createSavedQueries } from './saved-queries.js';
import { OidcTestParams, OidcTestResultParams, type createSettingsHandlers } from './settings.js';
import type { createSigningKeyHandlers } from './signing-keys.js';
import { SqlBody, type createSqlRunner } from './sql.js';
import { AcceptBody, IdParams, InviteBody, RoleBody, type createTeamHandlers } from './team.js';
import { PasskeyParams, UserCreateBody, UserIdParams, UserListParams, UserPatchBody, type createUserAdmin } from './users.js';

export interface AdminHandlers {
  session: ReturnType<typeof createAdminSessionHandlers>;
  team: ReturnType<typeof createTeamHandlers>;
  audit: ReturnType<typeof createAuditLog>;
  signingKeys: ReturnType<typeof createSigningKeyHandlers>;
  accounts: ReturnType<typeof createAdminAccountHandlers>;
  backups: ReturnType<typeof createBackupHandlers>;
  sql: ReturnType<typeof createSqlRunner>;
  saved: ReturnType<typeof createSavedQueries>;
  settings: ReturnType<typeof createSettingsHandlers>;
  messages: ReturnType<typeof createMessageHandlers>;
  users: ReturnType<typeof createUserAdmin>;
  metrics: ReturnType<typeof createMetricsHandler>;
}

/** The audit log's name for what a route does: recorded once it has succeeded (audit.ts). */
const audit = (action: string) => ({ config: { audit: action } });

/**
 * THE route table of every management route (docs/api.md §4): one line per endpoint, the guard
 * on the line, run at `onRequest` so a refused request never has its body parsed, and the
 * audit log's name of every change.
 * - `manage`: the secret key, or a console admin (a `viewer` reads only);
 * - `sql`: the secret key, or a console admin but a `viewer` (the runner and its saved queries);
 * - `inbox`: as `sql`, for the dev inbox (it holds sign-in links);
 * - `team`: the secret key, or an `owner` or `admin` (admins, invitations, audit, signing keys);
 * - `admin`: the admin cookie only; `origin`: no credential, but only from our own pages.
 * Storage buckets and objects join this table's rules through http/guards.ts.
 */
export function registerAdminRoutes(app: App, guards: Guards, h: AdminHandlers): void {
  const { manage, sql: runner, inbox, team: teamOnly, owners, admin, origin } = guards;
  const { session, team, audit: auditEntries, signingKeys, accounts, backups, sql, saved, settings, messages, users, metrics } = h;

  // Console admins and their team (§4.1)
  app.post('/api/v1/admin/setup', { onRequest: origin, schema: { body: SetupBody }, ...audit('admin.setup') }, session.setup);
  app.post('/api/v1/admin/setup/check', { onRequest: origin, schema: { body: SetupCheckBody } }, session.setupCheck);
  app.post('/api/v1/admin/login', { onRequest: origin, schema: { body: LoginBody }, ...audit('admin.login') }, session.login);
  app.post('/api/v1/admin/logout', { onRequest: admin, ...audit('admin.logout') }, session.logout);
  app.get('/api/v1/admin/me', { onRequest: admin }, session.me);
  app.get('/api/v1/admin/keys', { onRequest: admin }, session.keys);
  app.get('/api/v1/admin/admins', { onRequest: teamOnly }, team.list);
  app.patch(
    '/api/v1/admin/admins/:id',
    { onRequest: teamOnly, schema: { params: IdParams, body: RoleBody }, ...audit('admin.role') },
    team.setRole,
  );
  app.delete('/api/v1/admin/admins/:id', { onRequest: teamOnly, schema: { params: IdParams }, ...audit('admin.remove') }, team.remove);
  app.get('/api/v1/admin/invites', { onRequest: teamOnly }, team.invites);
  app.post('/api/v1/admin/invites', { onRequest: teamOnly, schema: { body: InviteBody }, ...audit('admin.invite') }, team.invite);
  app.delete(
    '/api/v1/admin/invites/:id',
    { onRequest: teamOnly, schema: { params: IdParams }, ...audit('admin.invite.revoke') },
    team.revokeInvite,
  );
  app.post(
    '/api/v1/admin/invites/accept',
    { onRequest: origin, schema: { body: AcceptBody }, ...audit('admin.invite.accept') },
    team.accept,
  );
  app.get('/api/v1/admin/audit', { onRequest: teamOnly, schema: { querystring: AuditParams } }, auditEntries);
  app.post('/api/v1/admin/signing-keys/rotate', { onRequest: teamOnly, ...audit('signing_keys.rotate') }, signingKeys.rotate);
  // `plinth admin create|set-password` through a running server (with the secret key): it makes
  // owners and sets any admin's password, so an `admin` may not (it could make itself an owner).
  app.post('/api/v1/admins', { onRequest: owners, schema: { body: AdminAccountBody }, ...audit('admin.create') }, accounts.create);
  app.post(
    '/api/v1/admins/password',
    { onRequest: owners, schema: { body: AdminAccountBody }, ...audit('admin.password') },
    accounts.setPassword,
  );

  // SQL runner, settings, project (§3)
  app.post('/api/v1/sql', { onRequest: runner, schema: { body: SqlBody }, ...audit('sql.run') }, sql);
  app.get('/api/v1/sql/saved', { onRequest: runner, schema: { summary: 'The saved queries, by name' } }, saved.list);
  app.post(
    '/api/v1/sql/saved',
    { onRequest: runner, schema: { summary: 'Save a query', body: SavedQueryBody }, ...audit('sql.saved.create') },
    saved.create,
  );
  app.patch(
    '/api/v1/sql/saved/:id',
    {
      onRequest: runner,
      schema: { summary: 'Rename or change a saved query', params: SavedQueryParams, body: SavedQueryPatch },
      ...audit('sql.saved.update'),
    },
    saved.update,
  );
  app.delete(
    '/api/v1/sql/saved/:id',
    { onRequest: runner, schema: { summary: 'Delete a saved query', params: SavedQueryParams }, ...audit('sql.saved.delete') },
    saved.remove,
  );
  app.get('/api/v1/settings/auth', { onRequest: manage }, settings.auth);
  app.patch('/api/v1/settings/auth', { onRequest: manage, ...audit('settings.auth.update') }, settings.updateAuth);
  app.post(
    '/api/v1/settings/auth/oidc/:id/test',
    { onRequest: manage, schema: { params: OidcTestParams }, ...audit('settings.auth.oidc.test') },
    settings.startOidcTest,
  );
  app.get(
    '/api/v1/settings/auth/oidc/:id/tests/:test_id',
    { onRequest: manage, schema: { params: OidcTestResultParams } },
    settings.oidcTestResult,
  );
  app.get('/api/v1/project', { onRequest: manage }, settings.project);
  app.patch('/api/v1/project', { onRequest: manage, ...audit('project.update') }, settings.updateProject);

  // Messages (§3)
  app.get('/api/v1/messages', { onRequest: manage, schema: { querystring: MessageListParams } }, messages.log);
  // The dev inbox holds reset and sign-in links: reading it can take over end-users, so it is not
  // a `viewer`'s (reads only), but the SQL runner's roles' (developer and up) and the secret key's.
  app.get('/api/v1/dev/inbox', { onRequest: inbox, schema: { querystring: MessageListParams } }, messages.devInbox);
  app.post('/api/v1/email/test', { onRequest: manage, schema: { body: TestEmailBody }, ...audit('email.test') }, messages.testEmail);
  app.post('/api/v1/email/preview', { onRequest: manage, schema: { body: PreviewBody } }, messages.preview);
  app.get(
    '/api/v1/email/templates/defaults',
    { onRequest: manage, schema: { summary: 'The built-in email templates, by kind' } },
    messages.defaults,
  );

  // End-user administration (§6)
  app.get('/api/v1/users', { onRequest: manage, schema: { querystring: UserListParams } }, users.list);
  app.post('/api/v1/users', { onRequest: manage, schema: { body: UserCreateBody }, ...audit('user.create') }, users.create);
  app.get('/api/v1/users/:id', { onRequest: manage, schema: { params: UserIdParams } }, users.get);
  app.patch(
    '/api/v1/users/:id',
    { onRequest: manage, schema: { params: UserIdParams, body: UserPatchBody }, ...audit('user.update') },
    users.update,
  );
  app.delete('/api/v1/users/:id', { onRequest: manage, schema: { params: UserIdParams }, ...audit('user.delete') }, users.remove);
  app.post('/api/v1/users/:id/signout', { onRequest: manage, schema: { params: UserIdParams }, ...audit('user.signout') }, users.signOut);
  app.get('/api/v1/users/:id/factors', { onRequest: manage, schema: { params: UserIdParams } }, users.factors);
  app.delete(
    '/api/v1/users/:id/factors',
    { onRequest: manage, schema: { params: UserIdParams }, ...audit('user.factors_reset') },
    users.resetFactors,
  );
  app.delete(
    '/api/v1/users/:id/passkeys/:passkey',
    { onRequest: manage, schema: { params: PasskeyParams }, ...audit('user.passkey_remove') },
    users.removePasskey,
  );
  app.post(
    '/api/v1/users/:id/resend-verification',
    { onRequest: manage, schema: { params: UserIdParams }, ...audit('user.resend_verification') },
    users.resendVerification,
  );

  // Backups of the embedded project (§3; docs/operations.md): they hold the keys, so the team's
  app.post('/api/v1/backups', { onRequest: teamOnly, ...audit('backup.create') }, backups.create);
  app.get('/api/v1/backups', { onRequest: teamOnly }, backups.list);
  app.get(
    '/api/v1/backups/:name',
    { onRequest: teamOnly, schema: { params: BackupParams }, ...audit('backup.download') },
    backups.download,
  );
  // Operations (§8): Prometheus text
  app.get('/metrics', { onRequest: manage }, metrics);
}
