/**
 * `plinth db diff [name] [--dry-run]`: the schema changes made in the console or the SQL runner
 * since the migrations, written as a new migration. The migrations are applied to a shadow
 * database (an embedded one in a temporary folder, from the pre-migrated template), both schemas
 * are read from the catalog (schema-diff.ts), and the SQL that turns the shadow's into the
 * database's is the new file, recorded as applied in the database (its changes are there already).
 * Works on the embedded database and on PostgreSQL; refused while a server holds the embedded one.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { type Db, migrateApp, migrateSystem, openDatabase, openPglite } from '../db/index.js';
import type { CommandContext } from './context.js';
import { migrationsDirOf } from './migrate.js';
import { newMigrationFile } from './migration.js';
import { fail } from './output.js';
import { closingAfter, serverOf } from './running.js';
import { diffShapes, readShape } from './schema-diff.js';

const HEADER = `-- Written by plinth db diff: what the database has that the migrations before this one do not make.
-- Compared: enum types, tables, columns, constraints, indexes, row-level security, policies, views,
-- functions, triggers, and the API roles' privileges. Not compared (write them by hand): sequences of
-- their own, domains, extensions, comments, and objects in Plinth's schemas (storage policies among them).
`;

/** The migrations of the project applied to `db` as `plinth migrate` (or a Supabase folder's start) applies them. */
async function applyMigrations(db: Db, context: CommandContext, dir: string): Promise<void> {
  await migrateSystem(db);
  const project = context.config.project;
  if (project?.supabase) {
    const { applySupabaseFolder } = await import('./supabase-apply.js');
    await applySupabaseFolder(db, project);
  } else {
    await migrateApp(db, dir);
  }
}

export async function run(context: CommandContext): Promise<void> {
  const { args, config } = context;
  const [, name] = args.positional;
  const project = config.project;
  const dir = project?.supabase
    ? join(project.root, 'supabase', 'migrations')
    : migrationsDirOf({ ...context, args: { ...args, positional: [] } });
  const server = serverOf(config);
  if (server && !config.databaseUrl)
    fail(`the embedded database in ${config.dataDir} is held by the running server (pid ${server.pid}); stop it, then run plinth db diff`);
  const schemas = ['public', ...(project?.settings.api?.schemas ?? []).filter((s) => s !== 'public')];
  const files = readdirSafe(dir);

  const db = await openDatabase(config);
  const current = await closingAfter(db, async () => {
    const applied = new Set((await db.query<{ name: string }>('select name from plinth.app_migrations')).rows.map((r) => r.name));
    const pending = files.filter((f) => !applied.has(f));
    if (pending.length) fail(`the database has not applied ${pending.join(', ')}: run plinth migrate first, then plinth db diff`);
    return readShape(db, schemas);
  });

  const shadowDir = mkdtempSync(join(tmpdir(), 'plinth-shadow-'));
  let shadowShape: Awaited<ReturnType<typeof readShape>>;
  try {
    const shadow = await openPglite(shadowDir, { extensions: Boolean(project?.supabase) });
    shadowShape = await closingAfter(shadow, async () => {
      await applyMigrations(shadow, context, dir);
      return readShape(shadow, schemas);
    });
  } finally {
    rmSync(shadowDir, { recursive: true, force: true });
  }

  const statements = diffShapes(shadowShape, current);
  if (statements.length === 0) {
    process.stdout.write('no schema changes: the database is what its migrations make\n');
    return;
  }
  const text = `${HEADER}\n${statements.join('\n\n')}\n`;
  if (args.flags['dry-run'] === true) {
    process.stdout.write(text);
    return;
  }
  const file = newMigrationFile(dir, name ?? 'schema_diff', text);
  // Its changes are in the database already: recorded as applied, so plinth migrate skips it there.
  const record = await openDatabase(config);
  await closingAfter(record, () =>
    record.query('insert into plinth.app_migrations (name, checksum) values ($1, $2)', [
      basename(file),
      createHash('sha256').update(text).digest('hex'),
    ]),
  );
  process.stdout.write(
    `${relative(process.cwd(), file) || file}: ${statements.length} statements (applied here already; the other databases take it with plinth migrate)\n`,
  );
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
  } catch {
    return [];
  }
}
