import { databaseWhere } from '../config/index.js';
import { DataDirLockedError, DbSetupError, DbUnavailableError, dbErrorKind, MigrationError } from '../db/index.js';
import { UsageError } from './args.js';

/**
 * The one line (cause and what to do) for a failure a user can meet and fix: a wrong
 * configuration, an unreachable or refusing database, a busy port or data dir. Null for
 * anything else, which is a bug. Never includes a password: DATABASE_URL is named by its
 * host, port and database only.
 * @example expectedFailure(new Error('config: PORT must be …'), {}) // 'config: PORT must be …'
 */
export function expectedFailure(err: unknown, context: { databaseUrl?: string | null; port?: number; host?: string }): string | null {
  if (err instanceof UsageError || err instanceof DataDirLockedError || err instanceof MigrationError || err instanceof DbSetupError) {
    return err.message;
  }
  const e = err as NodeJS.ErrnoException & { code?: string; syscall?: string };
  if (typeof e?.message === 'string' && e.message.startsWith('config: ')) return e.message;
  const port = (e as { port?: number })?.port ?? context.port;
  if (e?.code === 'EADDRINUSE' && e.syscall === 'listen') {
    return `port ${port} is already in use (another Plinth, or another program); start with --port <free port> or PORT=<free port>, or stop that program`;
  }
  if (e?.code === 'EACCES' && e.syscall === 'listen') {
    return `no permission to listen on port ${port} (ports below 1024 need root); start with --port 8080 or PORT=8080`;
  }
  if ((e?.code === 'EADDRNOTAVAIL' || e?.code === 'ENOTFOUND') && (e.syscall === 'listen' || e.syscall === 'getaddrinfo') && context.host) {
    return `cannot listen on HOST=${context.host} (${e.code}): it is no address of this machine; set HOST to one, or 0.0.0.0 for all`;
  }
  if (context.databaseUrl) {
    const where = databaseWhere(context.databaseUrl);
    const kind = dbErrorKind(err);
    if (kind === 'login_refused') {
      return `PostgreSQL at ${where} refused the login: ${redact(e.message, context.databaseUrl)}; check the user and password in DATABASE_URL`;
    }
    if (kind === 'unknown_database')
      return `${redact(e.message, context.databaseUrl)} on ${where}; create it, or fix the database name in DATABASE_URL`;
    if (kind === 'insufficient_privilege' && /permission denied/.test(e.message ?? '')) {
      return `PostgreSQL at ${where}: ${redact(e.message, context.databaseUrl)}; the user of DATABASE_URL needs the privileges README.md lists (Running on PostgreSQL)`;
    }
    if (err instanceof DbUnavailableError) {
      return `cannot reach PostgreSQL at ${where} (DATABASE_URL): ${err.reason}; check that it runs and that the host and port are right`;
    }
  }
  return null;
}

/** A driver message never repeats DATABASE_URL's password, but make sure. */
function redact(message: string, databaseUrl: string): string {
  try {
    const password = decodeURIComponent(new URL(databaseUrl).password);
    return password ? message.split(password).join('********') : message;
  } catch {
    return message;
  }
}
