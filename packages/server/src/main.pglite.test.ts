import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnPlinth, waitHealthy } from '../test/process.js';
import { startS3 } from '../test/s3.js';
import { until } from '../test/until.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-proc-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Polls `check` until it is true, or throws after `timeoutMs`. */

/**
 * A SQL runner request known to be in the server's hands when this resolves: its bytes are
 * written, and the server has since answered a /health sent after them (it reads its sockets
 * in order), so a signal now finds it in flight, however slow the machine.
 */
async function inFlight(url: string, secret: string, query: string) {
  let done = false;
  let written!: () => void;
  const sent = new Promise<void>((r) => {
    written = r;
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(`${url}/api/v1/sql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => {
        done = true;
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.on('finish', () => written());
    req.end(JSON.stringify({ query }));
  });
  await sent;
  expect((await fetch(`${url}/health`)).status).toBe(200);
  return { response, answered: () => done };
}

/** `plinth <args>` run to its end in `cwd`, the directory whose `.env` it reads. */
const plinthIn = (cwd: string, args: string[], env: Record<string, string> = {}) => runPlinth(args, { cwd, env });

/** The keys a started server printed. */
function bannerKeys(stdout: string) {
  return { public_key: stdout.match(/Public key:\s+(pk_\S+)/)?.[1], secret_key: stdout.match(/Secret key:\s+(sk_\S+)/)?.[1] };
}

/** What a brand-new TCP connection to the port meets: 'connected', or the error code. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function sql(url: string, secret: string, query: string, params?: unknown[]) {
  const res = await fetch(`${url}/api/v1/sql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(params ? { query, params } : { query }),
  });
  return { status: res.status, body: (await res.json()) as { results: Array<{ rows: Array<Record<string, unknown>> }>; code?: string } };
}

// The embedded database's process behaviour (this file runs in the PGlite suite only).
describe('embedded data dir (real processes)', () => {
  it('prints URLs and keys, refuses a second process on the same dir, reuses keys on restart; warns that PGlite has no statement timeout', async () => {
    const dir = tmp();
    const port = await freePort();
    const a = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(a.url, 60_000);
    expect(a.stdout()).toContain(`/api/v1`);
    expect(a.stdout()).toContain('/console');
    const keys = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8'));
    expect(a.stdout()).toContain(keys.public_key);
    expect(a.stdout()).toContain(keys.secret_key);

    const b = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/in use by another Plinth process \(pid \d+\)/);

    // keys while the server runs, from the 0600 file
    const k = spawnPlinth(['keys', '--json', '--data-dir', dir]);
    expect(await k.exited).toBe(0);
    expect(JSON.parse(k.stdout())).toEqual(keys);

    a.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    // The restart sets a SQL runner timeout, which PGlite cannot apply: one warning says so (the first start had none).
    expect(a.stdout() + a.stderr()).not.toContain('STATEMENT_TIMEOUT_MS');
    const again = spawnPlinth(['start', '--port', String(port), '--data-dir', dir], { STATEMENT_TIMEOUT_MS: '5000' });
    await waitHealthy(again.url, 60_000);
    expect(again.stdout()).toContain(keys.secret_key);
    await expect
      .poll(() => again.stdout() + again.stderr())
      .toContain('STATEMENT_TIMEOUT_MS has no effect on the embedded database (PGlite cannot cancel a statement)');
    again.proc.kill('SIGTERM');
    await again.exited;
  }, 90_000);

  it('plinth keys, sql, gen types use the configured keys (environment or .env), also while the server runs', async () => {
    const dir = tmp();
    const cwd = tmp();
    const configured = {
      public_key: 'pk_configured_public_0123456789abcdef0123456789',
      secret_key: 'sk_configured_secret_0123456789abcdef0123456789',
    };
    const env = { PLINTH_PUBLIC_KEY: configured.public_key, PLINTH_SECRET_KEY: configured.secret_key };
    writeFileSync(join(cwd, '.env'), `PLINTH_PUBLIC_KEY=${configured.public_key}\nPLINTH_SECRET_KEY="${configured.secret_key}"\n`);
    const bare = tmp(); // no .env, no key in the environment

    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir], env);
    try {
      await waitHealthy(s.url, 60_000);
      expect(bannerKeys(s.stdout())).toEqual(configured);
      for (const [where, extra] of [
        [cwd, {}], // .env
        [bare, env], // environment
        [bare, {}], // neither: the running server's keys
      ] as const) {
        const k = await plinthIn(where, ['keys', '--json', '--data-dir', dir], extra);
        expect(k.stderr).toBe(`project: embedded database in ${dir}\n`);
        expect(k.code).toBe(0);
        expect(JSON.parse(k.stdout)).toEqual(configured);
      }
      const viaServer = await plinthIn(bare, ['sql', 'create table cfg_t (v int); select 1 as one', '--data-dir', dir]);
      expect(viaServer.stderr).toBe(`project: embedded database in ${dir}\n`);
      expect(viaServer.code).toBe(0);
      expect(viaServer.stdout).toBe('CREATE TABLE\n\n one\n-----\n   1\n(1 row)\n');
      const types = await plinthIn(bare, ['gen', 'types', '--data-dir', dir]);
      expect(types.code).toBe(0);
      expect(types.stdout).toMatch(/cfg_t/);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    // Stopped: the configured keys, nothing made, nothing written beside the database.
    const fromDotenv = await plinthIn(cwd, ['keys', '--json', '--data-dir', dir]);
    expect(fromDotenv.code).toBe(0);
    expect(JSON.parse(fromDotenv.stdout)).toEqual(configured);
    expect(existsSync(join(dir, 'keys.json'))).toBe(false);
    const unconfigured = await plinthIn(bare, ['keys', '--json', '--data-dir', dir]);
    expect(unconfigured.code).toBe(1);
    expect(unconfigured.stdout).toBe('');
    expect(unconfigured.stderr).toMatch(/^project: .*\nplinth: no keys yet in .*PLINTH_PUBLIC_KEY and PLINTH_SECRET_KEY\n$/);
    expect(existsSync(join(dir, 'keys.json'))).toBe(false);
  }, 90_000);

  it('plinth keys never makes a project or keys: one line and exit 1 before the first start; a configured key wins over its made one', async () => {
    const dir = tmp();
    const cwd = tmp();
    const before = await plinthIn(cwd, ['keys', '--json', '--data-dir', dir]);
    expect(before.code).toBe(1);
    expect(before.stdout).toBe('');
    expect(before.stderr).toBe(
      `plinth: no Plinth database in ${dir}: plinth start --data-dir ${dir} makes one there (only start and init make projects)\n`,
    );
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);

    // Only the secret key configured: the server makes the public one and uses the configured secret.
    const secret = { PLINTH_SECRET_KEY: 'sk_only_the_secret_is_configured_0123456789' };
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir], secret);
    let used: ReturnType<typeof bannerKeys>;
    try {
      await waitHealthy(s.url, 60_000);
      used = bannerKeys(s.stdout());
      expect(used.secret_key).toBe(secret.PLINTH_SECRET_KEY);
      expect(used.public_key).toMatch(/^pk_/);
      const running = await plinthIn(cwd, ['keys', '--json', '--data-dir', dir]);
      expect(running.code).toBe(0);
      expect(JSON.parse(running.stdout)).toEqual(used);
      const viaServer = await plinthIn(cwd, ['sql', 'select 1 as one', '--data-dir', dir]);
      expect(viaServer.stderr).toBe(`project: embedded database in ${dir}\n`);
      expect(viaServer.code).toBe(0);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    const stopped = await plinthIn(cwd, ['keys', '--json', '--data-dir', dir], secret);
    expect(stopped.code).toBe(0);
    expect(JSON.parse(stopped.stdout)).toEqual(used);
    // Without the variable, the keys a start without it would use: both made ones.
    const made = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8'));
    expect(made.public_key).toBe(used.public_key);
    expect(made.secret_key).not.toBe(secret.PLINTH_SECRET_KEY);
    const unconfigured = await plinthIn(cwd, ['keys', '--json', '--data-dir', dir]);
    expect(JSON.parse(unconfigured.stdout)).toEqual(made);
  }, 90_000);

  it('on S3 storage: files go up and down and the start prints nothing on stderr (no SDK warning on Node 20)', async () => {
    const s3 = await startS3();
    const dir = tmp();
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir], s3.env);
    try {
      await waitHealthy(s.url, 60_000);
      const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
      const auth = { authorization: `Bearer ${secret}` };
      const bucket = await fetch(`${s.url}/api/v1/storage/buckets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'docs' }),
      });
      expect(bucket.status).toBe(201);
      const up = await fetch(`${s.url}/api/v1/storage/object/docs/a.txt`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/plain' },
        body: 'on s3',
      });
      expect(up.status).toBe(201);
      expect(await (await fetch(`${s.url}/api/v1/storage/object/docs/a.txt`, { headers: auth })).text()).toBe('on s3');
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
      await s3.stop();
    }
    expect(s.stderr()).toBe('');
  }, 90_000);

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'on %s: the request in flight completes with 200, new connections are refused, the process exits 0',
    async (signal) => {
      const dir = tmp();
      const port = await freePort();
      const s = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
      try {
        await waitHealthy(s.url, 60_000);
        const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
        // 10 s: time for a busy machine to refuse connections first, and under the 15 s a stop waits.
        const slow = await inFlight(s.url, secret, 'select pg_sleep(10), 42 as answer');
        s.proc.kill(signal);
        await until('the port is closed', async () => (await tryConnect(port)) === 'ECONNREFUSED', 10_000);
        expect(slow.answered()).toBe(false); // still running when new connections are refused
        const r = await slow.response;
        expect(r.status).toBe(200);
        expect(JSON.parse(r.body).results[0].rows[0].answer).toBe(42);
        expect(await s.exited).toBe(0);
        expect(existsSync(join(dir, 'server.json'))).toBe(false);
      } finally {
        if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
        await s.exited;
      }
    },
    90_000,
  );

  it('does not freeze while a slow query runs: /health answers while pg_sleep(20) is in flight', async () => {
    const dir = tmp();
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    try {
      await waitHealthy(s.url, 60_000);
      const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
      const slow = await inFlight(s.url, secret, 'select pg_sleep(20)');
      // Each answer arrives while the slow query still runs: the server does not wait for it
      // (a frozen server would answer all five only after it).
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${s.url}/health`);
        expect(res.status).toBe(200);
        expect(slow.answered()).toBe(false);
      }
      expect((await slow.response).status).toBe(200);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  }, 90_000);

  // How fast the restart is belongs to `npm run bench`; here: it restarts, and loses nothing.
  it('after kill -9 during a write load, restarts with every acknowledged write', async () => {
    const dir = tmp();
    const port = await freePort();
    const s = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(s.url, 60_000);
    const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
    expect((await sql(s.url, secret, 'create table acks (id int primary key)')).status).toBe(200);
    const acked: number[] = [];
    let next = 0;
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const id = next++;
        try {
          const r = await sql(s.url, secret, `insert into acks values (${id})`);
          if (r.status === 200) acked.push(id);
        } catch {
          return; // the server died mid-request: not acknowledged
        }
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    // Killed once enough writes are acknowledged, however fast this machine is.
    const deadline = Date.now() + 30_000;
    while (acked.length < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    s.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await s.exited;
    expect(acked.length).toBeGreaterThanOrEqual(50);
    // The killed process left its lock (and PGlite its pid file) behind.
    writeFileSync(join(dir, 'pgdata', 'postmaster.pid'), `${s.proc.pid}\n`);

    const restarted = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    try {
      await waitHealthy(restarted.url, 60_000);
      // Compared in SQL: the runner returns at most 1000 rows, and a fast machine acknowledges more.
      const r = await sql(
        restarted.url,
        secret,
        `select coalesce(array_agg(a order by a), '{}') as lost from unnest(string_to_array($1, ',')::int[]) a
         where not exists (select 1 from acks where id = a)`,
        [acked.join(',')],
      );
      expect(r.status).toBe(200);
      expect(r.body.results[0].rows[0].lost).toEqual([]);
    } finally {
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
    }
  }, 90_000);

  it('plinth sql goes through the running server; plinth migrate applies each file once, in order', async () => {
    const dir = tmp();
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    await waitHealthy(s.url, 60_000);
    const viaServer = spawnPlinth([
      'sql',
      'create table cli_t (v int); insert into cli_t values (7); select v from cli_t',
      '--data-dir',
      dir,
    ]);
    expect(await viaServer.exited).toBe(0);
    expect(viaServer.stdout()).toBe('CREATE TABLE\n\nINSERT 0 1\n\n v\n---\n 7\n(1 row)\n');
    const migrateBusy = spawnPlinth(['migrate', join(dir, 'none'), '--data-dir', dir]);
    expect(await migrateBusy.exited).toBe(1);
    expect(migrateBusy.stderr()).toMatch(
      /^project: .*\nplinth: the embedded database in .* is held by the running server \(pid \d+\); stop it, then run plinth migrate, or restart it with plinth start --migrate .*\n$/,
    );
    s.proc.kill('SIGTERM');
    await s.exited;

    const migrations = join(dir, 'migrations');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(migrations);
    writeFileSync(join(migrations, '002_more.sql'), 'insert into m_t values (2);');
    writeFileSync(join(migrations, '001_init.sql'), 'create table m_t (v int); insert into m_t values (1);');
    const first = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain('applied: 001_init.sql, 002_more.sql');
    const second = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toContain('nothing to apply');
    writeFileSync(join(migrations, '001_init.sql'), 'create table m_t (v int);');
    const changed = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await changed.exited).toBe(1);
    expect(changed.stderr()).toMatch(/001_init.sql was changed after it was applied/);
    const direct = spawnPlinth(['sql', 'select v from m_t order by v', '--data-dir', dir]);
    expect(await direct.exited).toBe(0);
    expect(direct.stdout()).toBe(' v\n---\n 1\n 2\n(2 rows)\n');
  }, 90_000);

  it('plinth gen types writes the table types (making the folder), from the running server or from the data dir', async () => {
    const dir = tmp();
    const out = join(tmp(), 'src', 'generated', 'db.ts');
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    try {
      await waitHealthy(s.url, 60_000);
      const seed = spawnPlinth([
        'sql',
        'create table todos (id bigserial primary key, title text not null, done boolean default false)',
        '--data-dir',
        dir,
      ]);
      expect(await seed.exited).toBe(0);
      const online = spawnPlinth(['gen', 'types', '--out', out, '--data-dir', dir]);
      expect(await online.exited).toBe(0);
      expect(online.stderr()).toBe(`project: embedded database in ${dir}\nwrote ${out}\n`);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    expect(readFileSync(out, 'utf8')).toMatch(/title: string/);
    const offline = spawnPlinth(['gen', 'types', '--data-dir', dir]);
    expect(await offline.exited).toBe(0);
    expect(offline.stdout()).toBe(readFileSync(out, 'utf8'));
  }, 90_000);
});

describe('migrations at start (real processes)', () => {
  it('plinth start --migrate applies the files before serving; a failing one names its file and line, and nothing of it stays', async () => {
    const { mkdirSync } = await import('node:fs');
    const dir = tmp();
    const migrations = join(tmp(), 'migrations');
    mkdirSync(migrations);
    writeFileSync(join(migrations, '001_init.sql'), 'create table m_t (v int);\ninsert into m_t values (1);\n');
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir, '--migrate', migrations]);
    try {
      await waitHealthy(s.url, 60_000);
      expect(s.stdout()).toContain('migrations applied: 001_init.sql');
      const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
      // Served at once: the schema cache was built after the migration.
      const rows = await fetch(`${s.url}/api/v1/db/m_t`, { headers: { authorization: `Bearer ${secret}` } });
      expect(rows.status).toBe(200);
      expect(await rows.json()).toEqual([{ v: 1 }]);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }

    writeFileSync(
      join(migrations, '002_more.sql'),
      'insert into m_t values (2);\n\n-- a typo two lines down\ninsert into m_t\n  values (3), (oops);\n',
    );
    const bad = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir], { MIGRATIONS_DIR: migrations });
    expect(await bad.exited).toBe(1);
    expect(bad.stderr()).toMatch(
      /^plinth: migration .*\/002_more\.sql failed at line 5: column "oops" does not exist; nothing of this run was applied: fix the file and run again\n$/,
    );
    const check = spawnPlinth(['sql', 'select count(*)::int as n from m_t', '--data-dir', dir]);
    expect(await check.exited).toBe(0);
    expect(check.stdout()).toBe(' n\n---\n 1\n(1 row)\n'); // only the row of 001
  }, 90_000);
});
