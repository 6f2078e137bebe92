/**
 * A Supabase CLI project folder applied to its database at start, as `supabase start` does on a
 * fresh one: `supabase/migrations/*.sql` in name order (recorded in plinth.app_migrations, so a
 * restart applies only new files), then the seed files (`[db.seed] sql_paths`, default
 * `supabase/seed.sql`) once, on the first start of the data dir. Both run with Supabase's search
 * path (`public, extensions`: `crypt()`, `uuid_generate_v4()` unqualified, as in its SQL). A
 * failing file stops the start with one line naming it, the line and PostgreSQL's message.
 */
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Project } from '../config/index.js';
import { type Db, DbError, MigrationError, migrateApp, splitStatements } from '../db/index.js';

/** The search path Supabase's database gives every role (`"$user", public, extensions`). */
export const SUPABASE_SEARCH_PATH = 'set local search_path = "$user", public, extensions';
/** plinth.kv: the folder's seeds ran on this database (they run once, on its first start). */
const SEEDED_KEY = 'supabase.seeded';
/** plinth.kv: PostgREST settings the folder's SQL gave with `alter role authenticator set pgrst.…`. */
export const PGRST_SETTINGS_KEY = 'supabase.pgrst';

const PGRST_SET = /^alter\s+role\s+"?authenticator"?\s+set\s+"?(pgrst\.[a-z_]+)"?\s*(?:to|=)\s*'([^']*)'\s*;?$/i;

/** A statement without the comments before it. */
function bare(stmt: string): string {
  return stmt.replace(/^(\s*--[^\n]*\n)+/, '').trim();
}

/**
 * `alter role authenticator set pgrst.db_plan_enabled to 'true'` configures PostgREST, which
 * Plinth does not run: the setting is kept in plinth.kv for the /rest/v1 face (a role setting
 * needs a superuser for an unknown parameter on PostgreSQL, and Plinth has no `authenticator`).
 */
export async function interceptSupabase(stmt: string, tx: Pick<Db, 'query'>): Promise<boolean> {
  const m = PGRST_SET.exec(bare(stmt));
  if (!m) return false;
  await tx.query(
    `insert into plinth.kv (key, value) values ($1, jsonb_build_object($2::text, $3::text))
     on conflict (key) do update set value = plinth.kv.value || excluded.value, updated_at = now()`,
    [PGRST_SETTINGS_KEY, m[1], m[2]],
  );
  return true;
}

/** The 1-based line of a character index in a text. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

export interface SupabaseApplied {
  migrations: string[];
  seeds: string[];
  /** Seed paths the config names that are not there (the Supabase CLI skips them too). */
  missingSeeds: string[];
  /** Tables of public with no row-level security that the anon role may read (named at every start). */
  openTables: string[];
}

/**
 * The folder's SQL runs as written for Supabase (migration 0141): a table it makes has no RLS
 * until the file enables it, a function it makes is executable by everyone. Local to the
 * transaction that applies the files; anything made another way stays closed until opened.
 */
export const AS_WRITTEN = "select pg_catalog.set_config('plinth.as_written', 'on', true)";

/** Tables of public the anon role may read with no row-level security to filter them. */
const OPEN_TABLES_SQL = `select c.relname as name from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relrowsecurity
    and exists (select 1 from pg_roles where rolname = 'anon') and has_table_privilege('anon', c.oid, 'select')
  order by c.relname`;

/**
 * Applies the folder's migrations, then (first start only) its seeds.
 * @example await applySupabaseFolder(db, project) // { migrations: ['00000000000000_schema.sql'], seeds: ['…/seed.sql'], missingSeeds: [] }
 */
export async function applySupabaseFolder(db: Db, project: Project): Promise<SupabaseApplied> {
  const s = project.supabase?.settings;
  if (!s) return { migrations: [], seeds: [], missingSeeds: [], openTables: [] };
  const dir = `${project.root}/supabase/migrations`;
  const migrations =
    s.db.migrations.enabled && existsSync(dir)
      ? await migrateApp(db, dir, { prelude: [SUPABASE_SEARCH_PATH, AS_WRITTEN], intercept: interceptSupabase })
      : [];
  const files = (project.settings.db?.seed ?? []).map((f) => `${project.root}/${f}`);
  const present = files.filter((f) => existsSync(f));
  const missingSeeds = files.filter((f) => !existsSync(f)).map((f) => relative(project.root, f));
  const seeds = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(726354003)');
    const done = await tx.query('select 1 from plinth.kv where key = $1', [SEEDED_KEY]);
    if (done.rows.length) return [];
    await tx.query(SUPABASE_SEARCH_PATH);
    await tx.query(AS_WRITTEN);
    for (const f of present) {
      const sql = readFileSync(f, 'utf8');
      let offset = 0;
      for (const stmt of splitStatements(sql)) {
        const at = Math.max(0, sql.indexOf(stmt, offset));
        offset = at + stmt.length;
        try {
          if (!(await interceptSupabase(stmt, tx))) await tx.query(stmt);
          if (db.secureNewRelations) await tx.query('select plinth.secure_new_relations()');
        } catch (err) {
          if (!(err instanceof DbError)) throw err;
          const line = lineAt(sql, at + (err.position ? err.position - 1 : 0));
          throw new MigrationError(
            `seed ${f} failed at line ${line}: ${err.message}; no seed was applied: fix the file and start again (the data dir keeps the migrations)`,
          );
        }
      }
    }
    await tx.query(`insert into plinth.kv (key, value) values ($1, $2::jsonb)`, [
      SEEDED_KEY,
      JSON.stringify(present.map((f) => relative(project.root, f))),
    ]);
    return present;
  });
  const openTables = (await db.query<{ name: string }>(OPEN_TABLES_SQL)).rows.map((r) => r.name);
  return { migrations, seeds, missingSeeds, openTables };
}
