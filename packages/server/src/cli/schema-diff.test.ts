import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, migrateApp, openPglite } from '../db/index.js';
import { openPostgres } from '../db/postgres.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { diffShapes, readShape } from './schema-diff.js';

// plinth db diff's core (issue 33): what a database has beyond its migrations, as SQL that,
// added as the next migration, makes a database built from the migrations the same again.
const M1 = `
create type mood as enum ('ok', 'sad');
create table notes (id serial primary key, body text not null, mood mood not null default 'ok');
create table tags (id int primary key, name text unique);
create function note_count() returns bigint language sql stable as $$ select count(*) from notes $$;
`;

/** What a user does in the console and the SQL runner after M1. */
const CONSOLE = `
alter type mood add value 'glad';
create table note_tags (note_id int not null references notes on delete cascade, tag_id int not null references tags, primary key (note_id, tag_id));
alter table notes add column owner uuid default gen_random_uuid();
alter table notes alter column body drop not null;
alter table tags drop column name;
alter table tags add column label varchar(40) not null default 'x' check (length(label) > 0);
create index notes_owner on notes (owner);
create policy own_notes on notes for select to authenticated using (owner = auth.uid());
create policy tag_read on note_tags for select using (true);
create or replace function note_count() returns bigint language sql stable as $$ select count(*) + 0 from notes $$;
create function touch() returns trigger language plpgsql as $$ begin new.body := coalesce(new.body, ''); return new; end $$;
create trigger notes_touch before insert on notes for each row execute function touch();
create view sad_notes as select id, body from notes where mood = 'sad';
revoke delete on tags from anon;
grant execute on function note_count() to authenticated;
`;

const dirs: string[] = [];
const dbs: Array<{ db: Db; target: TestDbTarget }> = [];
afterAll(async () => {
  for (const { db, target } of dbs) {
    await db.close();
    await target.cleanup();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function migratedDb(): Promise<Db> {
  const target = await freshDbTarget({ migrated: true });
  const db = target.databaseUrl
    ? await openPostgres(target.databaseUrl, { max: 2 })
    : await openPglite(target.dataDir, { extensions: true });
  dbs.push({ db, target });
  return db;
}

let dir: string;
let current: Db;
let shadow: Db;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plinth-diff-'));
  dirs.push(dir);
  writeFileSync(join(dir, '001_notes.sql'), M1);
  [current, shadow] = await Promise.all([migratedDb(), migratedDb()]);
  await migrateApp(current, dir);
  await migrateApp(shadow, dir);
});

describe('the schema diff', () => {
  it('finds nothing between two databases built from the same migrations', async () => {
    expect(diffShapes(await readShape(shadow, ['public']), await readShape(current, ['public']))).toEqual([]);
  });

  it('writes the console’s changes as SQL that makes the migrations’ database the same', async () => {
    await current.script(CONSOLE);
    const statements = diffShapes(await readShape(shadow, ['public']), await readShape(current, ['public']));
    const text = statements.join('\n');
    // Each change is there, in SQL a reader recognises.
    for (const piece of [
      `alter type "public"."mood" add value if not exists 'glad';`,
      'create table "public"."note_tags" (',
      'alter table "public"."notes" add column "owner" uuid default gen_random_uuid();',
      'alter table "public"."notes" alter column "body" drop not null;',
      'alter table "public"."tags" drop column "name";',
      'CREATE INDEX notes_owner ON public.notes USING btree (owner);',
      'create policy "own_notes" on "public"."notes" as permissive for select to authenticated using',
      'CREATE TRIGGER notes_touch BEFORE INSERT ON public.notes',
      'create view "public"."sad_notes" as',
      'revoke delete on "public"."tags" from "anon";',
      'grant execute on function note_count() to "authenticated";',
    ]) {
      expect(text).toContain(piece);
    }
    // Applied as the next migration to the database built from the migrations: nothing left.
    writeFileSync(join(dir, '002_schema_diff.sql'), `${text}\n`);
    await migrateApp(shadow, dir);
    expect(diffShapes(await readShape(shadow, ['public']), await readShape(current, ['public']))).toEqual([]);
  });

  it('drops what the database no longer has', async () => {
    await current.script('drop view sad_notes; drop table note_tags; drop function touch() cascade;');
    const statements = diffShapes(await readShape(shadow, ['public']), await readShape(current, ['public']));
    expect(statements).toEqual(
      expect.arrayContaining([
        'drop view if exists "public"."sad_notes";',
        'drop table if exists "public"."note_tags" cascade;',
        'drop function if exists touch();',
      ]),
    );
    writeFileSync(join(dir, '003_drops.sql'), `${statements.join('\n')}\n`);
    await migrateApp(shadow, dir);
    expect(diffShapes(await readShape(shadow, ['public']), await readShape(current, ['public']))).toEqual([]);
  });
});
