import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnIn, waitHealthy } from '../../test/process.js';

// A project is the folder of plinth.json, found from any folder below it; every command names
// what it acts on first, and only init and start (dev) make a project.
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-project-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const plinthIn = (cwd: string, args: string[], env: Record<string, string> = {}, stdin?: string) => runPlinth(args, { cwd, env, stdin });
const NO_PROJECT =
  /^plinth: no Plinth project here: no plinth\.json in \S+ or a folder above it; run plinth init to make one here, or cd into your project's folder\n$/;

describe('outside a project', () => {
  it.each([
    ['keys', ['keys']],
    ['keys --json', ['keys', '--json']],
    ['sql', ['sql', 'select 1']],
    ['migrate', ['migrate']],
    ['gen types', ['gen', 'types', '--out', 'src/database.ts']],
    ['admin create', ['admin', 'create', '--email', 'ops@example.com', '--password', 'a long admin passphrase']],
    ['admin set-password', ['admin', 'set-password', '--email', 'ops@example.com', '--password', 'a long admin passphrase']],
    ['backup', ['backup']],
    ['restore', ['restore', 'backup.tar.gz']],
  ])('%s says so in one line, exit 1, and makes nothing', async (_name, args) => {
    const cwd = tmp();
    const r = await plinthIn(cwd, args);
    expect(r.stderr).toMatch(NO_PROJECT);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a --data-dir with no database is no project either (a mistyped path makes nothing)', async () => {
    const cwd = tmp();
    const empty = join(cwd, 'no-such-data');
    for (const args of [['keys'], ['sql', 'select 1'], ['migrate'], ['gen', 'types'], ['backup']]) {
      const r = await plinthIn(cwd, [...args, '--data-dir', empty]);
      expect(r.stderr).toBe(
        `plinth: no Plinth database in ${empty}: plinth start --data-dir ${empty} makes one there (only start and init make projects)\n`,
      );
      expect(r.code).toBe(1);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('gen types --url needs no project: it reads a running server', async () => {
    const r = await plinthIn(tmp(), ['gen', 'types', '--url', `http://127.0.0.1:${await freePort()}`, '--key', 'sk_x']);
    expect(r.stderr).toMatch(/^plinth: cannot read the tables of http:\/\/127\.0\.0\.1:\d+: it does not answer/);
  });

  it('help and a usage mistake need none', async () => {
    const cwd = tmp();
    const help = await plinthIn(cwd, ['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}init \[--port N\]/m);
    expect(help.stdout).toMatch(/^ {2}backup \[--out F\]/m);
    const usage = await plinthIn(cwd, ['sql']);
    expect([usage.code, usage.stderr]).toEqual([2, 'plinth: plinth sql needs a query: plinth sql "select 1"\n']);
  });
});

describe('plinth init', () => {
  it('writes plinth.json, migrations/ and a .gitignore entry, says what to run next, and refuses a second time', async () => {
    const cwd = tmp();
    writeFileSync(join(cwd, '.gitignore'), 'node_modules');
    const r = await plinthIn(cwd, ['init', '--port', '3001']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        `Made a Plinth project in ${cwd}: plinth.json, migrations/, .gitignore`,
        '  the embedded database will be in data/ (or set DATABASE_URL to a PostgreSQL URL), port 3001',
        '',
        'Next:',
        '  npx plinth dev                              # the backend on http://localhost:3001, applying migrations/*.sql as you add them',
        '  npx plinth gen types --out src/database.ts  # the types of your tables, for createClient<Database>()',
        '',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(readFileSync(join(cwd, 'plinth.json'), 'utf8'))).toEqual({
      $schema: './node_modules/plinth/plinth.schema.json',
      data_dir: 'data',
      port: 3001,
      database_url_env: 'DATABASE_URL',
      migrations_dir: 'migrations',
    });
    expect(existsSync(join(cwd, 'migrations'))).toBe(true);
    expect(readFileSync(join(cwd, '.gitignore'), 'utf8')).toBe(
      'node_modules\n# the embedded database and its keys (plinth.json data_dir)\n/data/\n',
    );
    const again = await plinthIn(cwd, ['init']);
    expect([again.code, again.stderr]).toEqual([
      1,
      `plinth: ${join(cwd, 'plinth.json')} exists already: this folder is a Plinth project\n`,
    ]);
    // In a project, a command run from below it finds it, and names it.
    mkdirSync(join(cwd, 'src', 'deep'), { recursive: true });
    const keys = await plinthIn(join(cwd, 'src', 'deep'), ['keys']);
    expect(keys.stderr).toBe(
      `project ${cwd}: embedded database in ${join(cwd, 'data')}\nplinth: no keys yet in ${join(cwd, 'data')}: start the server once (plinth start), or set PLINTH_PUBLIC_KEY and PLINTH_SECRET_KEY\n`,
    );
  });

  it('a wrong plinth.json is one line naming the file and the key', async () => {
    const cwd = tmp();
    for (const [text, line] of [
      [
        '{"data_dir": "db", "prot": 3000}',
        `plinth: config: ${join(cwd, 'plinth.json')}: unknown key "prot"; it takes $schema, name, data_dir, port, database_url_env, migrations_dir, auth, storage, realtime, db, functions, webhooks, api\n`,
      ],
      ['{"port": "3000"}', `plinth: config: ${join(cwd, 'plinth.json')}: "port" must be a port number (0–65535)\n`],
      [
        '{"data_dir": ',
        expect.stringMatching(/^plinth: config: \S+plinth\.json is not valid JSON \(.*\); fix it or remove it and run plinth init\n$/),
      ],
    ] as const) {
      writeFileSync(join(cwd, 'plinth.json'), text);
      const r = await plinthIn(cwd, ['keys']);
      expect([r.code, r.stderr]).toEqual([1, line]);
    }
  });
});

describe('a project made by plinth start', () => {
  it('start in an empty folder makes the project; the CLI finds it from below; the settings and the .env of the project apply', async () => {
    const cwd = tmp();
    const port = await freePort();
    // The project's .env names the port and a fixed secret key, wherever a command runs from.
    writeFileSync(join(cwd, '.env'), `PORT=${port}\nPLINTH_SECRET_KEY=sk_from_the_projects_dotenv_0123456789abcdef\n`);
    const server = spawnIn(cwd, ['start'], { LOG_LEVEL: 'warn' });
    const out = () => server.output();
    try {
      await waitHealthy(`http://127.0.0.1:${port}`, 60_000);
      await expect
        .poll(out)
        .toMatch(new RegExp(`^no Plinth project here: made one in ${cwd} \\(plinth\\.json, migrations/, \\.gitignore\\)$`, 'm'));
      await expect.poll(out).toMatch(new RegExp(`^project ${cwd}: embedded database in data$`, 'm'));
      expect(existsSync(join(cwd, 'plinth.json'))).toBe(true);
      mkdirSync(join(cwd, 'web'));
      const keys = await plinthIn(join(cwd, 'web'), ['keys', '--json']);
      expect(JSON.parse(keys.stdout).secret_key).toBe('sk_from_the_projects_dotenv_0123456789abcdef');
      const sql = await plinthIn(join(cwd, 'web'), ['sql', "select 'a,b' as text, 42 as n, true as ok, null as nothing"]);
      expect(sql.stdout).toBe(' text | n  | ok | nothing\n------+----+----+---------\n a,b  | 42 | t  |\n(1 row)\n');
      const csv = await plinthIn(cwd, ['sql', "select 'a,b' as text, 42 as n", '--csv']);
      expect(csv.stdout).toBe('text,n\r\n"a,b",42\r\n');
      const json = await plinthIn(cwd, ['sql', 'select 1 as a; select 2 as b', '--json']);
      expect(json.stdout).toBe('[{"b":2}]\n');
      const bad = await plinthIn(cwd, ['sql', 'select 1;\nselect nope\n  from nowhere']);
      expect([bad.code, bad.stderr]).toEqual([
        1,
        `project ${cwd}: embedded database in data\nplinth: line 3, column 8: relation "nowhere" does not exist\nLINE 3:   from nowhere\n               ^\n`,
      ]);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);
});

describe('plinth dev', () => {
  it('applies each new migration as it appears (a failing one once fixed) and logs readable lines, one per request', async () => {
    const cwd = tmp();
    expect((await plinthIn(cwd, ['init'])).code).toBe(0);
    const port = await freePort();
    const dev = spawnIn(cwd, ['dev', '--port', String(port)], { PLINTH_SECRET_KEY: 'sk_dev_loop_secret_0123456789abcdef0123456789' });
    const out = () => dev.output();
    const url = `http://127.0.0.1:${port}`;
    const status = async (table: string) =>
      (await fetch(`${url}/api/v1/db/${table}`, { headers: { authorization: 'Bearer sk_dev_loop_secret_0123456789abcdef0123456789' } }))
        .status;
    try {
      await waitHealthy(url, 60_000);
      // The child's output is read as it arrives, which may be after /health answered: polled.
      await expect.poll(out).toMatch(new RegExp(`INFO: watching ${join(cwd, 'migrations')} for new migrations`));
      expect(out()).not.toMatch(/^\{"level"/m); // no JSON lines: those are for start
      writeFileSync(join(cwd, 'migrations', '0001_notes.sql'), 'create table notes (id int primary key);\n');
      await expect.poll(() => status('notes')).toBe(200);
      await expect.poll(out).toMatch(/INFO: migrations applied: 0001_notes\.sql/);
      // The request line is written once the answer went out: polled.
      await expect.poll(out).toMatch(/DEBUG: GET \/api\/v1\/db\/notes 200 \d+ ms/);
      writeFileSync(join(cwd, 'migrations', '0002_tags.sql'), 'create tabel tags (id int);\n');
      await expect
        .poll(out)
        .toMatch(/WARN: migration not applied: migration \S+0002_tags\.sql failed at line 1: syntax error at or near "tabel"/);
      writeFileSync(join(cwd, 'migrations', '0002_tags.sql'), 'create table tags (id int primary key);\n');
      await expect.poll(() => status('tags')).toBe(200);
      expect(out().match(/migration not applied/g)).toHaveLength(1);
    } finally {
      dev.proc.kill('SIGTERM');
      await dev.exited;
    }
  }, 120_000);
});
