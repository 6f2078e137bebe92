/**
 * Management and the console's server side (docs/api.md §4, docs/console.md). What this area adds:
 * - endpoints: every management route, in one table (routes.ts): admin setup, login,
 *   logout, me, keys; the team (admins, their roles, invitations), the audit log, signing-key
 *   rotation; admins made or changed with the secret key (`plinth admin` through a running
 *   server); backups of the embedded project (made, listed, downloaded: backups.ts,
 *   backup-archive.ts); SQL runner and its saved queries (saved-queries.ts); auth settings and
 *   project, test sign-ins of OpenID Connect providers; messages, dev inbox, test email and
 *   template preview; end-user administration (`/api/v1/users…`); `GET /metrics` (Prometheus
 *   text: requests, latency, rate-limit refusals, database pool, outbox queue); the console's pages
 *   at /console (console.ts).
 * - tables: plinth.admins, plinth.admin_sessions, plinth.admin_setup_tokens and
 *   auth.users.banned_until (migration 0012_admins.sql); admins.role, plinth.admin_invites,
 *   plinth.admin_audit (0040_admin_roles.sql); plinth.saved_queries (0100_saved_queries.sql).
 * - guards (guard.ts): the secret key, or a console admin whose role allows the route (the
 *   cookie and its CSRF rule are resolved by http/guards.ts); the audit hook (audit.ts).
 * - rate limits: failed console sign-ins like end-user sign-in (AUTH_RATE_SIGNIN_*).
 * - error codes: csrf_rejected, setup_link_invalid, email_already_confirmed, flow_url_missing,
 *   admin_not_found, admin_exists, last_owner, invite_invalid.
 * - CLI: `plinth admin create|set-password` (cli.ts).
 */
import type { Logger } from 'pino';
import type { StorageConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import type { App, CallerGuards, Metrics, ProjectKeys } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import { createAdminAccountHandlers } from './accounts.js';
import { createBackupHandlers } from './backups.js';
import type { Messaging } from '../messaging/index.js';
import type { SettingsStore } from '../settings/index.js';
import { createAdminService, type Hasher } from './admins.js';
import { createAuditLog, registerAudit } from './audit.js';
import { createGuards } from './guard.js';
import { createMessageHandlers } from './messages.js';
import { createMetricsHandler } from './metrics.js';
import { registerAdminRoutes } from './routes.js';
import { createAdminSessionHandlers, type SigninLimits } from './session.js';
import { createSavedQueries } from './saved-queries.js';
import type { AdminSessions } from './sessions.js';
import { createSettingsHandlers, type OidcTestHooks } from './settings.js';
import { createSigningKeyHandlers, type RotationAnswer } from './signing-keys.js';
import { createSqlRunner } from './sql.js';
import { createTeamHandlers, createTeamService } from './team.js';
import { type AccountHooks, createUserAdmin } from './users.js';

export { ADMIN_USAGE, adminCommand, askPassword, CliError } from './cli.js';
export { type BackupManifest, RESTORE_MAX_BYTES, RestoreTooLargeError, restoreBackup, writeBackup } from './backup-archive.js';
export { registerConsole } from './console.js';
export { SQL_RUNNER_ROLE } from './sql.js';
export type { Admin, AdminService, Hasher } from './admins.js';
export type { AccountHooks } from './users.js';
export type { Guards } from './guard.js';
export { createAdminSessions, type AdminSessions } from './sessions.js';

export interface AdminOptions {
  db: Db;
  clock: Clock;
  keys: ProjectKeys;
  settings: SettingsStore;
  messaging: Messaging;
  /** Who is calling (http/guards.ts), the console cookie included. */
  callers: CallerGuards;
  /** The console's sessions, built before the callers (which look cookies up in them). */
  sessions: AdminSessions;
  /** The auth area's argon2id hasher (auth.hasher). */
  hasher: Hasher;
  hooks: AccountHooks & {
    /** The auth area's signing-key rotation. */
    rotateSigningKey(options: { revoke: boolean }): Promise<RotationAnswer>;
  };
  /** Test sign-ins of the `oidc_providers` (the auth area's). */
  oidcTests: OidcTestHooks;
  publicUrl: string;
  statementTimeoutMs: number;
  onSchemaChange: () => Promise<unknown>;
  /** Failed console sign-ins, counted like the end-users' (the auth area's limits). */
  signinLimits: SigninLimits;
  /** ADMIN_EMAIL / ADMIN_PASSWORD, both or neither. */
  initialAdmin: { email: string; password: string } | null;
  /** The request counters GET /metrics serves (http/metrics.ts). */
  metrics: Metrics;
  log: Logger;
  /** Backups of the embedded project: its data dir, the storage it copies, and the hold on storage's file deletions. */
  backups: { dataDir: string; storage: StorageConfig; hold: () => Promise<() => void> };
}

export interface AdminArea {
  admins: ReturnType<typeof createAdminService>;
  guards: ReturnType<typeof createGuards>;
  /** The one-time setup token printed at this start (no admin yet and no ADMIN_EMAIL), else null. */
  setupToken: string | null;
}

/**
 * Builds the admin area and mounts every management route. At a start with ADMIN_EMAIL and
 * ADMIN_PASSWORD that admin is created or its password set; with no admin at all a one-time
 * setup token is made for the link main.ts prints.
 * @example const admin = await registerAdmin(app, { db, clock, keys, settings, messaging, callers, hasher: auth.hasher, hooks, publicUrl, … });
 */
export async function registerAdmin(app: App, o: AdminOptions): Promise<AdminArea> {
  const admins = createAdminService({ db: o.db, clock: o.clock, hasher: o.hasher, sessions: o.sessions });
  const publicOrigin = new URL(o.publicUrl).origin;
  const secure = publicOrigin.startsWith('https:');
  const guards = createGuards(o.callers, { publicOrigin });
  // Before any route it records: storage's are mounted after this, and inherit the hook.
  registerAudit(app, { db: o.db, clock: o.clock, log: o.log });
  const team = createTeamService({ db: o.db, clock: o.clock, hasher: o.hasher, sessions: o.sessions, publicUrl: o.publicUrl });
  registerAdminRoutes(app, guards, {
    session: createAdminSessionHandlers({ admins, keys: o.keys, limits: o.signinLimits, secure }),
    team: createTeamHandlers(team, secure),
    audit: createAuditLog(o.db),
    signingKeys: createSigningKeyHandlers(o.hooks.rotateSigningKey),
    accounts: createAdminAccountHandlers(admins),
    backups: createBackupHandlers({ db: o.db, ...o.backups }),
    sql: createSqlRunner({ db: o.db, statementTimeoutMs: o.statementTimeoutMs, onSchemaChange: o.onSchemaChange }),
    saved: createSavedQueries({ db: o.db, clock: o.clock }),
    settings: createSettingsHandlers(
      o.settings,
      {
        database: o.db.kind,
        emailDelivery: o.messaging.emailMode,
        smsConfigured: o.messaging.smsConfigured,
      },
      o.oidcTests,
    ),
    messages: createMessageHandlers(o.messaging, () => o.settings.project().name),
    users: createUserAdmin({
      db: o.db,
      clock: o.clock,
      hasher: o.hasher,
      hooks: o.hooks,
      minPasswordLength: () => o.settings.auth().min_password_length,
      verificationUrlSet: () => Boolean(o.settings.auth().email_verification_url),
    }),
    metrics: createMetricsHandler(o.metrics, o.db),
  });
  let setupToken: string | null = null;
  if (o.initialAdmin) await admins.upsert(o.initialAdmin.email, o.initialAdmin.password);
  else if (!(await admins.any())) setupToken = await admins.issueSetupToken();
  return { admins, guards, setupToken };
}
