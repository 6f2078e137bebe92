/**
 * Everything a server does to its database before serving: check the privileges (PostgreSQL),
 * migrate, move API traffic onto its own login, and choose how DDL is followed.
 */
import type { Logger } from 'pino';
import { connectApiLogin } from './api-login.js';
import { type DdlWatch, watchDdl } from './ddl-watch.js';
import { migrateSystem } from './migrate.js';
import { checkPrivileges } from './privileges.js';
import type { Db } from './types.js';

export interface PrepareOptions {
  log: Logger;
  /** DATABASE_URL (PostgreSQL): the owner's URL, from which Plinth's API login URL is made. */
  databaseUrl?: string | null;
  /** DATABASE_AUTHENTICATOR_URL: the operator's own API login instead of Plinth's. */
  authenticatorUrl?: string;
}

/**
 * Prepares the database for serving; the returned watch must be stopped before the database
 * is closed. Failures a user can fix are one-line `DbSetupError`s.
 * @example const ddl = await prepareDatabase(db, { log, databaseUrl: config.databaseUrl }); … await ddl.stop();
 */
export async function prepareDatabase(db: Db, options: PrepareOptions): Promise<DdlWatch> {
  await checkPrivileges(db, { ownApiLogin: !options.authenticatorUrl });
  await migrateSystem(db);
  if (db.kind === 'postgres' && options.databaseUrl) {
    const login = await connectApiLogin(db, options.databaseUrl, options.authenticatorUrl);
    options.log.info({ login }, 'API requests use their own database login');
  }
  return watchDdl(db, options.log);
}
