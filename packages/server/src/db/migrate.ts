import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { splitStatements } from './statements.js';
import { dbErrorKind } from './errors.js';
import { type Db, DbError, DbSetupError, type Queryable } from './types.js';

/** Same path from src/db and dist/db: the SQL files are not compiled. */
const SYSTEM_DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
const LOCK_KEY = 726_354_001; // arbitrary, constant: serialises migrations across instances

/** An app migration that cannot be applied: names the file and, for a SQL error, its line. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** The 1-based line of a character index in a text. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function systemMigrations(dir = SYSTEM_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f.replace(/\.sql$/, ''), sql: readFileSync(join(dir, f), 'utf8') }));
}

/**
 * Creates or upgrades the system schema. Idempotent, and safe when several instances start
 * at once: a transaction-scoped advisory lock lets one migrate while the others wait.
 * @example await migrateSystem(db); // → versions applied now
 */
export async function migrateSystem(db: Db, migrations = systemMigrations()): Promise<number[]> {
  // A restart (or a project copied from the template) has every migration: one read says so,
  // without the lock and the DDL of applyMissing (4 statements and a transaction, issue 32).
  const recorded = await db
    .query<{ version: number }>('select version from plinth.schema_migrations')
    .then((r) => new Set(r.rows.map((row) => Number(row.version))))
    .catch(() => null);
  const applied = recorded && migrations.every((m) => recorded.has(m.version)) ? [] : await applyMissing(db, migrations);
  if (db.kind === 'postgres') {
    const has = await db.query<{ ok: boolean }>(`select to_regprocedure('plinth.ddl_mode()') is not null as ok`);
    const mode = has.rows[0]?.ok ? (await db.query<{ mode: string }>('select plinth.ddl_mode() as mode')).rows[0]?.mode : null;
    db.secureNewRelations = mode === 'poll';
  }
  return applied;
}

/**
 * Whether this database has no event triggers (a database owner without superuser) but has 0070's
 * plinth.secure_new_functions(): then a system migration runs it after each statement, as the
 * event trigger does elsewhere. Otherwise a function a migration makes outside public and then
 * revokes would be new to the next securing run, which gives new functions outside public
 * PostgreSQL's default (execute for public), and reopen it (migration 0154 closes the realtime
 * functions that were reopened so).
 */
async function securesFunctionsByHand(tx: Queryable): Promise<boolean> {
  const { rows } = await tx.query<{ ok: boolean }>(
    `select to_regprocedure('plinth.secure_new_functions()') is not null and to_regprocedure('plinth.ddl_mode()') is not null as ok`,
  );
  if (!rows[0]?.ok) return false;
  return (await tx.query<{ mode: string }>('select plinth.ddl_mode() as mode')).rows[0]?.mode === 'poll';
}

/** The migrations not recorded yet, in one transaction under the lock. */
async function applyMissing(db: Db, migrations: Migration[]): Promise<number[]> {
  let current = '';
  return db
    .transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
      await tx.query('create schema if not exists plinth');
      await tx.query(
        'create table if not exists plinth.schema_migrations (version int primary key, name text not null, applied_at timestamptz not null default now())',
      );
      const done = new Set(
        (await tx.query<{ version: number }>('select version from plinth.schema_migrations')).rows.map((r) => Number(r.version)),
      );
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        current = m.name;
        const secure = await securesFunctionsByHand(tx);
        for (const stmt of splitStatements(m.sql)) {
          await tx.query(stmt);
          if (secure) await tx.query('select plinth.secure_new_functions()');
        }
        await tx.query('insert into plinth.schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
        applied.push(m.version);
      }
      return applied;
    })
    .catch((err) => {
      // A privilege the connecting role lacks (checkPrivileges names the usual ones first).
      if (dbErrorKind(err) === 'insufficient_privilege') {
        throw new DbSetupError(
          `PostgreSQL: preparing Plinth's system schema failed in migration ${current}: ${err.message}. ` +
            'README "Running on PostgreSQL" lists the privileges the DATABASE_URL role needs.',
          { cause: err },
        );
      }
      throw err;
    });
}

/** How a project folder's dialect runs its migrations (cli/supabase-apply.ts: a Supabase folder's). */
export interface AppMigrationOptions {
  /** Statements run first in the transaction (`set local search_path = …`). */
  prelude?: string[];
  /** Takes a statement instead of running it (true: handled). */
  intercept?: (statement: string, tx: Queryable) => Promise<boolean>;
}

/**
 * Applies the app's own `migrations/*.sql` once each, in name order, recording each with a
 * checksum. A changed file that was already applied is an error, not a silent skip.
 * @example await migrateApp(db, './migrations'); // → ['001_todos.sql']
 */
export async function migrateApp(db: Db, dir: string, options: AppMigrationOptions = {}): Promise<string[]> {
  if (!existsSync(dir)) throw new MigrationError(`no migrations directory at ${dir}; create it, or name another one`);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [LOCK_KEY + 1]);
    for (const stmt of options.prelude ?? []) await tx.query(stmt);
    const rows = (await tx.query<{ name: string; checksum: string }>('select name, checksum from plinth.app_migrations')).rows;
    const known = new Map(rows.map((r) => [r.name, r.checksum]));
    const applied: string[] = [];
    for (const f of files) {
      const sql = readFileSync(join(dir, f), 'utf8');
      const sum = createHash('sha256').update(sql).digest('hex');
      const prev = known.get(f);
      if (prev !== undefined) {
        if (prev !== sum) throw new MigrationError(`migration ${f} was changed after it was applied; add a new file instead`);
        continue;
      }
      let offset = 0;
      for (const stmt of splitStatements(sql)) {
        const at = Math.max(0, sql.indexOf(stmt, offset));
        offset = at + stmt.length;
        try {
          if (!(await options.intercept?.(stmt, tx))) await tx.query(stmt);
          // Without event triggers: what the statement made in public is secured at once (0015).
          if (db.secureNewRelations) await tx.query('select plinth.secure_new_relations()');
        } catch (err) {
          if (!(err instanceof DbError)) throw err;
          // PostgreSQL gives the character where the statement failed: the line of the file.
          const line = lineAt(sql, at + (err.position ? err.position - 1 : 0));
          throw new MigrationError(
            `migration ${join(dir, f)} failed at line ${line}: ${err.message}; nothing of this run was applied: fix the file and run again`,
          );
        }
      }
      await tx.query('insert into plinth.app_migrations (name, checksum) values ($1, $2)', [f, sum]);
      applied.push(f);
    }
    return applied;
  });
}
