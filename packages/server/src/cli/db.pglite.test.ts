import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPlinth } from '../../test/process.js';

// plinth migration new, seeds and plinth db reset (issue 33), run as a user runs them.
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
async function project(): Promise<string> {
  const cwd = mkdtempSync(join(tmpdir(), 'plinth-db-'));
  dirs.push(cwd);
  expect((await runPlinth(['init'], { cwd })).code).toBe(0);
  return cwd;
}
const plinth = (cwd: string, args: string[], env: Record<string, string> = {}) => runPlinth(args, { cwd, env });

describe('plinth migration new', () => {
  it('writes an empty <timestamp>_<name>.sql in the migrations folder; a bad name is one line', async () => {
    const cwd = await project();
    const r = await plinth(cwd, ['migration', 'new', 'add_posts']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^migrations\/\d{14}_add_posts\.sql\n$/);
    const [file] = readdirSync(join(cwd, 'migrations'));
    expect(readFileSync(join(cwd, 'migrations', file), 'utf8')).toBe('-- add_posts\n');
    const bad = await plinth(cwd, ['migration', 'new', 'Drop Table']);
    expect([bad.code, bad.stderr.split('\n').at(-2)]).toEqual([
      2,
      'plinth: "Drop Table" is not a migration name: use lowercase letters, digits, _ and - (e.g. plinth migration new add_posts)',
    ]);
  });
});

describe('plinth db reset', () => {
  it('drops the rows, applies the migrations then the seeds (seed.sql, or the db.seed list); asks for --yes without a terminal', async () => {
    const cwd = await project();
    writeFileSync(join(cwd, 'migrations', '001_posts.sql'), 'create table posts (id int primary key, title text);\n');
    writeFileSync(join(cwd, 'seed.sql'), "insert into posts values (1, 'seeded');\n");
    const noTty = await plinth(cwd, ['db', 'reset']);
    expect([noTty.code, noTty.stderr.split('\n').at(-2)]).toEqual([
      2,
      'plinth: plinth db reset deletes every row: with no terminal to ask, add --yes',
    ]);
    const first = await plinth(cwd, ['db', 'reset', '--yes']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/migrations applied: 001_posts\.sql; seeds: .*seed\.sql\n$/);
    await plinth(cwd, ['sql', "insert into posts values (2, 'made later')"]);
    const again = await plinth(cwd, ['db', 'reset', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect((await plinth(cwd, ['sql', 'select id, title from posts', '--json'])).stdout).toBe('[{"id":1,"title":"seeded"}]\n');

    // A listed set instead of seed.sql, in its order; a missing file is one line naming it.
    writeFileSync(join(cwd, 'more.sql'), "insert into posts values (3, 'more');\n");
    const file = JSON.parse(readFileSync(join(cwd, 'plinth.json'), 'utf8'));
    writeFileSync(join(cwd, 'plinth.json'), JSON.stringify({ ...file, db: { seed: ['more.sql', 'missing.sql'] } }));
    const missing = await plinth(cwd, ['db', 'reset', '--yes']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /plinth: the seed file \S+missing\.sql \(plinth\.json db\.seed\) does not exist; create it or remove it from the list\n$/,
    );
    writeFileSync(join(cwd, 'plinth.json'), JSON.stringify({ ...file, db: { seed: ['more.sql'] } }));
    expect((await plinth(cwd, ['db', 'reset', '--yes'])).code).toBe(0);
    expect((await plinth(cwd, ['sql', 'select id from posts', '--json'])).stdout).toBe('[{"id":3}]\n');
  }, 120_000);

  it('is refused on PostgreSQL and while a server runs on the data dir, each in one line', async () => {
    const cwd = await project();
    const pg = await plinth(cwd, ['db', 'reset', '--yes'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect([pg.code, pg.stderr.split('\n').at(-2)]).toEqual([
      1,
      'plinth: plinth db reset works on the embedded database only, and DATABASE_URL names a PostgreSQL: reset it with its own tools (dropdb, createdb), then plinth migrate',
    ]);
    // The server file a running server writes, naming a live process (this one).
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(cwd, 'data'), { recursive: true });
    writeFileSync(join(cwd, 'data', 'server.json'), JSON.stringify({ url: 'http://127.0.0.1:1', pid: process.pid }));
    const running = await plinth(cwd, ['db', 'reset', '--yes']);
    expect([running.code, running.stderr.split('\n').at(-2)]).toEqual([
      1,
      `plinth: the embedded database in ${join(cwd, 'data')} is held by the running server (pid ${process.pid}); stop it, then run plinth db reset`,
    ]);
  });
});

describe('plinth db diff', () => {
  it('writes what the console changed as the next migration, recorded as applied; a reset rebuilds the same schema', async () => {
    const cwd = await project();
    writeFileSync(join(cwd, 'migrations', '001_posts.sql'), 'create table posts (id int primary key, title text);\n');
    expect((await plinth(cwd, ['migrate'])).code).toBe(0);
    expect((await plinth(cwd, ['db', 'diff'])).stdout).toBe('no schema changes: the database is what its migrations make\n');
    // The SQL runner, as the console's table editor uses it.
    const made = await plinth(cwd, [
      'sql',
      'create table comments (id serial primary key, post_id int references posts, body text not null)',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const dry = await plinth(cwd, ['db', 'diff', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('create table "public"."comments" (\n  "id" serial,\n  "post_id" integer,\n  "body" text not null\n);');
    expect(readdirSync(join(cwd, 'migrations'))).toEqual(['001_posts.sql']);
    const diff = await plinth(cwd, ['db', 'diff', 'add_comments']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toMatch(/^migrations\/\d{14}_add_comments\.sql: \d+ statements/);
    // Recorded: plinth migrate has nothing to apply here, and the diff is empty now.
    expect((await plinth(cwd, ['migrate'])).stdout).toBe('nothing to apply\n');
    expect((await plinth(cwd, ['db', 'diff'])).stdout).toBe('no schema changes: the database is what its migrations make\n');
    // A database made from the migrations alone has the table.
    expect((await plinth(cwd, ['db', 'reset', '--yes'])).code).toBe(0);
    expect((await plinth(cwd, ['sql', "select to_regclass('public.comments') is not null as ok", '--json'])).stdout).toBe(
      '[{"ok":true}]\n',
    );
    expect((await plinth(cwd, ['db', 'diff'])).stdout).toBe('no schema changes: the database is what its migrations make\n');
  }, 180_000);

  it('refuses while migrations are not applied, in one line', async () => {
    const cwd = await project();
    writeFileSync(join(cwd, 'migrations', '001_posts.sql'), 'create table posts (id int primary key);\n');
    const r = await plinth(cwd, ['db', 'diff']);
    expect([r.code, r.stderr.split('\n').at(-2)]).toEqual([
      1,
      'plinth: the database has not applied 001_posts.sql: run plinth migrate first, then plinth db diff',
    ]);
  }, 120_000);
});
