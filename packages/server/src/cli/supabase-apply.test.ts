import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { findProject } from '../config/index.js';
import { type Db, MigrationError, migrateSystem } from '../db/index.js';
import { applySupabaseFolder, PGRST_SETTINGS_KEY } from './supabase-apply.js';

// A Supabase CLI folder applied at start (issue 33): its migrations in name order, recorded,
// then its seeds once; and the database objects Supabase's SQL assumes (migration 0140), on
// PGlite and on PostgreSQL with and without a superuser. The SQL below uses what the four
// folders of Supabase's own client suites use: crypt()/gen_salt() from `extensions`, users and
// storage rows written directly, policies with storage.foldername(), auth.uid(), auth.role(),
// realtime.topic(), grants to service_role, PostgREST settings on `authenticator`.
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
let open: { db: Db; cleanup: () => Promise<void> } | null = null;
afterEach(async () => {
  await open?.cleanup();
  open = null;
});

function folder(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'plinth-sbapply-'));
  dirs.push(d);
  for (const [f, text] of Object.entries({ 'supabase/config.toml': '[api]\nport = 54321\n', ...files })) {
    mkdirSync(join(d, f, '..'), { recursive: true });
    writeFileSync(join(d, f), text);
  }
  return d;
}

async function database(): Promise<Db> {
  const t = await openTestDb();
  open = t;
  await migrateSystem(t.db);
  return t.db;
}

const USER = '317eadce-631a-4429-a0bb-f19a7a517b4a';
const MIGRATION_1 = `-- Enable PostgREST features for testing
alter role authenticator set pgrst.db_aggregates_enabled to 'true';
create extension if not exists "uuid-ossp" with schema extensions;
create table public.todos (
  id uuid primary key default extensions.uuid_generate_v4(),
  task text not null,
  user_id uuid references auth.users (id)
);
alter table public.todos enable row level security;
create policy "own todos" on public.todos for all to authenticated using (auth.uid() = user_id);
grant all on public.todos to service_role;
`;
const MIGRATION_2 = `create policy "channel members" on realtime.messages for select to authenticated
  using (realtime.topic() like '%channel%');
create policy "public folder" on storage.objects for all using (bucket_id = 'docs' and (storage.foldername(name))[1] = 'public');
create policy "authenticated folder" on storage.objects for all using ((storage.foldername(name))[1] = 'authenticated' and auth.role() = 'authenticated');
`;
const SEED = `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at, confirmation_token, email_change, email_change_token_new, recovery_token)
values ('00000000-0000-0000-0000-000000000000', '${USER}', 'authenticated', 'authenticated', 'ada@example.com',
  crypt('password123', gen_salt('bf')), now(), '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), '', '', '', '');
insert into storage.buckets (id, name, owner, created_at, updated_at, public) values ('docs', 'docs', '${USER}', now(), now(), false);
insert into storage.objects (id, bucket_id, name, owner, created_at, updated_at, last_accessed_at, metadata)
values ('03e458f9-892f-4db2-8cb9-d3401a689e25', 'docs', 'public/cat.png', '${USER}', now(), now(), now(), '{"mimetype": "image/png", "size": 1234}');
insert into public.todos (task, user_id) values ('seeded', '${USER}');
`;

describe('a Supabase project folder applied to its database', () => {
  it('applies migrations in name order, then the seeds once; a restart applies only a new migration', { timeout: 120_000 }, async () => {
    const dir = folder({
      'supabase/migrations/20250102000000_second.sql': MIGRATION_2,
      'supabase/migrations/20250101000000_first.sql': MIGRATION_1,
      'supabase/seed.sql': SEED,
    });
    const project = findProject(dir, {});
    if (!project) throw new Error('no project');
    const db = await database();
    const first = await applySupabaseFolder(db, project);
    expect(first.migrations).toEqual(['20250101000000_first.sql', '20250102000000_second.sql']);
    expect(first.seeds).toEqual([join(dir, 'supabase', 'seed.sql')]);

    // The seeded user's bcrypt hash is where Plinth keeps hashes, not in the readable user row,
    // and verifies the password the seed gave.
    const user = await db.query<{ email: string; encrypted_password: string | null; aud: string }>(
      'select email, encrypted_password, aud from auth.users where id = $1',
      [USER],
    );
    expect(user.rows).toEqual([{ email: 'ada@example.com', encrypted_password: null, aud: 'authenticated' }]);
    const hash = await db.query<{ ok: boolean }>(
      "select hash like '$2%' and hash = extensions.crypt('password123', hash) as ok from auth.passwords where user_id = $1",
      [USER],
    );
    expect(hash.rows).toEqual([{ ok: true }]);
    // Storage rows written the way Supabase keeps them get Plinth's columns from `metadata`.
    const object = await db.query('select size::int as size, mime_type, owner_id, path_tokens from storage.objects where bucket_id = $1', [
      'docs',
    ]);
    expect(object.rows).toEqual([{ size: 1234, mime_type: 'image/png', owner_id: USER, path_tokens: ['public', 'cat.png'] }]);
    const bucket = await db.query('select name, owner_id from storage.buckets where id = $1', ['docs']);
    expect(bucket.rows).toEqual([{ name: 'docs', owner_id: USER }]);
    // PostgREST's settings are kept for the /rest/v1 face (Plinth has no authenticator role).
    const pgrst = await db.query('select value from plinth.kv where key = $1', [PGRST_SETTINGS_KEY]);
    expect(pgrst.rows).toEqual([{ value: { 'pgrst.db_aggregates_enabled': 'true' } }]);

    // A restart: nothing again (the seed would fail on its duplicate user if it ran twice).
    expect(await applySupabaseFolder(db, project)).toEqual({ migrations: [], seeds: [], missingSeeds: [], openTables: [] });
    writeFileSync(
      join(dir, 'supabase/migrations/20250103000000_third.sql'),
      'alter table public.todos add column done boolean default false;',
    );
    expect((await applySupabaseFolder(db, project)).migrations).toEqual(['20250103000000_third.sql']);
    expect((await db.query('select task, done from public.todos')).rows).toEqual([{ task: 'seeded', done: false }]);
  });

  it("the folder's SQL runs as written for Supabase (a table without RLS, a function anyone may call), named at start; what is made afterwards is closed", {
    timeout: 60_000,
  }, async () => {
    const dir = folder({
      'supabase/migrations/20250101000000_tables.sql': `create table public.open_notes (id int primary key, body text);
create table public.closed_notes (id int primary key, body text);
alter table public.closed_notes enable row level security;
create function public.hello() returns text language sql as $$ select 'hi' $$;`,
      'supabase/seed.sql': "create table public.seeded (id int primary key);\ninsert into public.open_notes values (1, 'a');",
    });
    const project = findProject(dir, {});
    if (!project) throw new Error('no project');
    const db = await database();
    const applied = await applySupabaseFolder(db, project);
    expect(applied.openTables).toEqual(['open_notes', 'seeded']);
    const flags = async (names: string[]) =>
      (
        await db.query<{ name: string; rls: boolean; anon_reads: boolean }>(
          `select relname as name, relrowsecurity as rls, has_table_privilege('anon', oid, 'select') as anon_reads
           from pg_class where relnamespace = 'public'::regnamespace and relname = any($1) order by relname`,
          [names],
        )
      ).rows;
    expect(await flags(['open_notes', 'closed_notes', 'seeded'])).toEqual([
      { name: 'closed_notes', rls: true, anon_reads: true },
      { name: 'open_notes', rls: false, anon_reads: true },
      { name: 'seeded', rls: false, anon_reads: true },
    ]);
    const callable = (fn: string) =>
      db.query<{ ok: boolean }>(`select has_function_privilege('anon', $1, 'execute') as ok`, [fn]).then((r) => r.rows[0].ok);
    expect(await callable('public.hello()')).toBe(true);

    // The same SQL made another way (the SQL runner, the console, plinth migrate): closed until opened.
    await db.transaction(async (tx) => {
      await tx.query('create table public.later (id int primary key)');
      await tx.query("create function public.later_fn() returns text language sql as $$ select 'no' $$");
      if (db.secureNewRelations) await tx.query('select plinth.secure_new_relations()');
    });
    expect(await flags(['later'])).toEqual([{ name: 'later', rls: true, anon_reads: true }]);
    expect(await callable('public.later_fn()')).toBe(false);
    // And the setting does not outlive the folder's transaction.
    expect((await db.query<{ on: boolean }>('select plinth.as_written() as on')).rows[0].on).toBe(false);
  });

  it('the objects Supabase SQL assumes work as Supabase defines them', { timeout: 60_000 }, async () => {
    const db = await database();
    const r = await db.query<Record<string, unknown>>(`select
      storage.foldername('a/b/c.png') as folders, storage.filename('a/b/c.png') as file, storage.extension('a/b/c.PNG') as ext,
      (select rolbypassrls from pg_roles where rolname = 'service_role') is not null as service_role,
      exists (select 1 from pg_namespace where nspname = 'extensions') as extensions_schema`);
    expect(r.rows[0]).toEqual({ folders: ['a', 'b'], file: 'c.png', ext: 'png', service_role: true, extensions_schema: true });
    const claims = JSON.stringify({ sub: USER, role: 'authenticated', email: 'ada@example.com' });
    const who = await db.transaction(async (tx) => {
      await tx.query("select set_config('request.jwt.claims', $1, true), set_config('realtime.topic', 'room:channel-1', true)", [claims]);
      return (await tx.query('select auth.uid()::text as uid, auth.role() as role, auth.email() as email, realtime.topic() as topic'))
        .rows[0];
    });
    expect(who).toEqual({ uid: USER, role: 'authenticated', email: 'ada@example.com', topic: 'room:channel-1' });
  });

  it("a failing migration stops with one line naming the file, the line and PostgreSQL's message; nothing of it stays", {
    timeout: 60_000,
  }, async () => {
    const dir = folder({
      'supabase/migrations/20250101000000_ok.sql': 'create table public.a (id int primary key);\n',
      'supabase/migrations/20250102000000_bad.sql': 'create table public.b (id int);\n\ninsert into public.nope values (1);\n',
    });
    const project = findProject(dir, {});
    if (!project) throw new Error('no project');
    const db = await database();
    const err = await applySupabaseFolder(db, project).catch((e: Error) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^migration ${join(dir, 'supabase/migrations/20250102000000_bad.sql')} failed at line 3: relation "public.nope" does not exist`,
      ),
    );
    expect((await db.query("select to_regclass('public.a')::text as a, to_regclass('public.b')::text as b")).rows).toEqual([
      { a: null, b: null },
    ]);
  });

  it('a failing seed names the file and line; a missing seed file is skipped and named', { timeout: 60_000 }, async () => {
    const dir = folder({
      'supabase/config.toml': '[db.seed]\nsql_paths = ["./seed.sql", "./missing.sql"]\n',
      'supabase/seed.sql': "select 1;\ninsert into auth.users (id, email) values ('not-a-uuid', 'x@example.com');\n",
    });
    const project = findProject(dir, {});
    if (!project) throw new Error('no project');
    const db = await database();
    const err = await applySupabaseFolder(db, project).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      new RegExp(`^seed ${join(dir, 'supabase/seed.sql')} failed at line 2: invalid input syntax for type uuid`),
    );
    writeFileSync(join(dir, 'supabase/seed.sql'), 'select 1;\n');
    expect(await applySupabaseFolder(db, project)).toEqual({
      migrations: [],
      seeds: [join(dir, 'supabase/seed.sql')],
      missingSeeds: [join('supabase', 'missing.sql')],
      openTables: [],
    });
  });
});
