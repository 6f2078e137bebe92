import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Plinth } from '../../../server/src/app.js';
import { loadConfig } from '../../../server/src/config/index.js';
import { freshDbTarget, type TestDbTarget } from '../../../server/test/db.js';
import { createClient } from '../../src/index.js';
import { launchChromium } from '../../../server/test/chromium.js';

// Issue 23's "done when": two browser tabs signed in as different users each see only their own
// live changes, through a restart of the server, with the SDK the server hosts. Each tab is a
// browser context of its own (its own localStorage, so its own user); the server is stopped and
// started again on the same port and database while the tabs stay open.

interface Seen {
  op: string;
  title: string;
  seq: number;
}
declare global {
  interface Window {
    rt: {
      seen: Seen[];
      statuses: string[];
      signIn(email: string, password: string): Promise<string | null>;
      write(title: string): Promise<string | null>;
    };
  }
}

const PASSWORD = 'correct horse battery';
let target: TestDbTarget;
let plinth: Plinth;
let port: number;
let base: string;
let pages: Server;
let app: string;
let browser: Browser;

async function start(): Promise<void> {
  const config = loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', PUBLIC_URL: 'http://localhost:8080' },
    { dataDir: target.dataDir, databaseUrl: target.databaseUrl, port: 0 },
    target.dataDir,
  );
  plinth = await buildApp({ config, logger: pino({ level: config.logLevel }) });
  await plinth.app.listen({ port, host: '127.0.0.1' });
  port = (plinth.app.server.address() as AddressInfo).port;
}

function page(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>realtime</title>
<script type="module">
  import { createClient } from '${base}/sdk/plinth.js';
  const client = createClient('${base}', '${plinth.keys.publicKey}', { realtime: { maxReconnectDelayMs: 500 } });
  const seen = [];
  const statuses = [];
  window.rt = {
    seen,
    statuses,
    async signIn(email, password) {
      const { error } = await client.auth.signIn({ email, password });
      if (error) return error.code;
      client.realtime.subscribe({ table: 'todos' }, (c) => seen.push({ op: c.op, title: c.row?.title ?? '', seq: c.seq }), (s) => statuses.push(s));
      return null;
    },
    async write(title) {
      const { error } = await client.from('todos').insert({ title });
      return error ? error.code : null;
    },
  };
</script></head><body>realtime</body></html>`;
}

beforeAll(async () => {
  target = await freshDbTarget({ migrated: true });
  port = 0;
  await start();
  base = `http://127.0.0.1:${port}`;
  await plinth.settings.updateAuth({ cors_origins: ['http://127.0.0.1:*'] });
  const res = await plinth.app.inject({
    method: 'POST',
    url: '/api/v1/sql',
    headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
    payload: {
      query: `create table todos (id bigserial primary key, title text not null, user_id uuid not null default auth.uid());
              create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());
              select realtime.enable('todos');`,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page());
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await plinth?.close();
  await target?.cleanup();
});

async function tab(addr: string): Promise<Page> {
  const context = await browser.newContext();
  const p = await context.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(e.message));
  await p.goto(`${app}/index.html`);
  await p.waitForFunction(() => window.rt !== undefined, undefined, { timeout: 10_000 });
  expect(await p.evaluate(([e, pw]) => window.rt.signIn(e, pw), [addr, PASSWORD] as const)).toBeNull();
  await p.waitForFunction(() => window.rt.statuses.includes('SUBSCRIBED'), undefined, { timeout: 30_000 });
  expect(errors).toEqual([]);
  return p;
}

const titles = (p: Page) => p.evaluate(() => window.rt.seen.map((s) => `${s.op}:${s.title}`));
const write = async (p: Page, title: string) => expect(await p.evaluate((t) => window.rt.write(t), title)).toBeNull();
const seenCount = (p: Page, n: number) => p.waitForFunction((k) => window.rt.seen.length >= k, n, { timeout: 60_000 });

describe('two tabs, two users, a server restart (issue 23)', () => {
  it('each tab sees only its own user’s live changes, before and after the restart', async () => {
    const users = [`tab-a-${process.pid}@example.com`, `tab-b-${process.pid}@example.com`];
    for (const addr of users) {
      const c = createClient(base, plinth.keys.publicKey);
      expect((await c.auth.signUp({ email: addr, password: PASSWORD })).error).toBeNull();
      c.auth.dispose();
    }
    const [ta, tb] = [await tab(users[0]), await tab(users[1])];
    await write(ta, 'a before');
    await write(tb, 'b before');
    await seenCount(ta, 1);
    await seenCount(tb, 1);

    // Restart: the same port and database; the tabs stay open and their SDK reconnects.
    await plinth.close();
    await ta.waitForFunction(() => window.rt.statuses.includes('RECONNECTING'), undefined, { timeout: 30_000 });
    await start();
    // Written as soon as the server is back, maybe before the tabs reconnected: the resume brings them.
    const other = createClient(base, plinth.keys.publicKey);
    expect((await other.auth.signIn({ email: users[0], password: PASSWORD })).error).toBeNull();
    expect((await other.from('todos').insert({ title: 'a while reconnecting' })).error).toBeNull();
    other.auth.dispose();
    await ta.waitForFunction(() => window.rt.statuses.lastIndexOf('SUBSCRIBED') > window.rt.statuses.indexOf('RECONNECTING'), undefined, {
      timeout: 60_000,
    });
    await write(ta, 'a after');
    await write(tb, 'b after');
    await seenCount(ta, 3);
    await seenCount(tb, 2);
    expect(await titles(ta)).toEqual(['insert:a before', 'insert:a while reconnecting', 'insert:a after']);
    expect(await titles(tb)).toEqual(['insert:b before', 'insert:b after']);
    const seqs = await ta.evaluate(() => window.rt.seen.map((s) => s.seq));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  });
});
