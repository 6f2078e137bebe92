import type { Config } from '../config/index.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import type { Db } from './types.js';

export { apiLoginName } from './api-login.js';
export { type DdlMode, type DdlWatch, ddlMode, POLL_MS } from './ddl-watch.js';
export { type DbErrorAnswer, type DbErrorContext, type DbErrorKind, type DbRelation, dbErrorAnswer, dbErrorKind } from './errors.js';
export { MigrationError, migrateApp, migrateSystem } from './migrate.js';
export { prepareDatabase } from './prepare.js';
export { acquireDataDirLock, DataDirLockedError } from './lock.js';
export { commandOf, splitStatements } from './statements.js';
export { OUTAGE_LOG_INTERVAL_MS, outageLogHook } from './outage-log.js';
export { openPglite } from './pglite.js';
export * from './types.js';

/**
 * Opens the project's database: PostgreSQL when `DATABASE_URL` is set, else PGlite in the data dir.
 * @example const db = await openDatabase(config);
 */
export function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolSize'> & { project?: Config['project'] },
): Promise<Db> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, { max: config.dbPoolSize })
    : openPglite(config.dataDir, { extensions: Boolean(config.project?.supabase) });
}
