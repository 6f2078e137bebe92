import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDbTarget, type TestDbTarget } from '../test/db.js';
import { freePort, spawnPlinth, waitHealthy } from '../test/process.js';

// `plinth keys` with DATABASE_URL: the keys live in the database (this file runs in the PostgreSQL suite only).
let target: TestDbTarget;
let url: string;
beforeAll(async () => {
  target = await freshDbTarget();
  url = target.databaseUrl as string;
});
afterAll(async () => {
  await target?.cleanup();
});

async function keys(env: Record<string, string>) {
  const k = spawnPlinth(['keys', '--json'], env);
  return { code: await k.exited, stdout: k.stdout(), stderr: k.stderr() };
}

describe('plinth keys with DATABASE_URL (real processes)', () => {
  it('never changes the database; prints the keys a start made, or the configured ones', async () => {
    const before = await keys({ DATABASE_URL: url });
    expect(before.code).toBe(1);
    expect(before.stdout).toBe('');
    // The project named first: where DATABASE_URL points, never its password.
    const where = `${new URL(url).hostname}:${new URL(url).port}${new URL(url).pathname}`;
    expect(before.stderr).toMatch(
      /^project [^\n]*: PostgreSQL at [^\n]+ \(DATABASE_URL\)\nplinth: no keys yet in the database of DATABASE_URL: start the server once .*\n$/,
    );
    expect(before.stderr.split('\n')[0].endsWith(`PostgreSQL at ${where} (DATABASE_URL)`)).toBe(true);
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      expect((await sql`select to_regnamespace('plinth')::text as s`)[0].s).toBeNull(); // not migrated by `keys`
    } finally {
      await sql.end();
    }

    const port = await freePort();
    const s = spawnPlinth(['start', '--port', String(port)], { DATABASE_URL: url });
    let made: { public_key?: string; secret_key?: string };
    try {
      await waitHealthy(s.url, 30_000);
      made = { public_key: s.stdout().match(/Public key:\s+(pk_\S+)/)?.[1], secret_key: s.stdout().match(/Secret key:\s+(sk_\S+)/)?.[1] };
      const running = await keys({ DATABASE_URL: url });
      expect(running.code).toBe(0);
      expect(JSON.parse(running.stdout)).toEqual(made);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    const configured = { public_key: 'pk_pg_configured_0123456789abcdef', secret_key: 'sk_pg_configured_0123456789abcdef' };
    const both = await keys({ DATABASE_URL: url, PLINTH_PUBLIC_KEY: configured.public_key, PLINTH_SECRET_KEY: configured.secret_key });
    expect(both.code).toBe(0);
    expect(JSON.parse(both.stdout)).toEqual(configured);
    const onlySecret = await keys({ DATABASE_URL: url, PLINTH_SECRET_KEY: configured.secret_key });
    expect(JSON.parse(onlySecret.stdout)).toEqual({ public_key: made.public_key, secret_key: configured.secret_key });
  }, 90_000);

  it('an unreachable database: one line naming the problem, exit 1, no stack trace', async () => {
    const port = await freePort(); // nothing listens there
    const r = await keys({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none` });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(
        `^project [^\\n]*: PostgreSQL at 127\\.0\\.0\\.1:${port}/none \\(DATABASE_URL\\)\\nplinth: cannot read the keys from DATABASE_URL: .+\\n$`,
      ),
    );
  }, 30_000);
});
