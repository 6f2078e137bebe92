import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Plinth } from '../../../server/src/app.js';
import { loadConfig } from '../../../server/src/config/index.js';
import { launchChromium } from '../../../server/test/chromium.js';
import { freshDbTarget, type TestDbTarget } from '../../../server/test/db.js';
import { createClient } from '../../src/index.js';

// Issue 37's "done when": a small chat in Chromium through the SDK the server hosts, on a private
// channel whose policies on realtime.messages admit the room's members only: two tabs (two
// users, each on its own instance of two sharing one PostgreSQL) see each other typing
// (presence) and each other's messages (broadcast); a third user's tab cannot join; and the same
// after one of the instances is stopped and started again while its tab stays open.

interface Chat {
  messages: string[];
  typing: string[];
  statuses: string[];
  signIn(email: string, password: string): Promise<string | null>;
  join(presenceKey: string): void;
  send(text: string): boolean;
  type(on: boolean): void;
}
declare global {
  interface Window {
    chat: Chat;
  }
}

const PASSWORD = 'correct horse battery';
const ROOM = 'room-1';
let target: TestDbTarget;
const instances: Array<{ plinth: Plinth | null; port: number }> = [
  { plinth: null, port: 0 },
  { plinth: null, port: 0 },
];
let pages: Server;
let app: string;
let browser: Browser;

async function start(i: number): Promise<Plinth> {
  const config = loadConfig(
    // A short heartbeat: presence of a stopped instance leaves the others within it.
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', PUBLIC_URL: 'http://localhost:8080', REALTIME_HEARTBEAT_SECONDS: '2' },
    { dataDir: target.dataDir, databaseUrl: target.databaseUrl, port: 0 },
    target.dataDir,
  );
  const plinth = await buildApp({ config, logger: pino({ level: config.logLevel }) });
  await plinth.app.listen({ port: instances[i].port, host: '127.0.0.1' });
  instances[i] = { plinth, port: (plinth.app.server.address() as AddressInfo).port };
  return plinth;
}

const baseOf = (i: number) => `http://127.0.0.1:${instances[i].port}`;

/** The chat page, talking to instance `i` (its SDK, its API). */
function page(i: number, key: string): string {
  const base = baseOf(i);
  return `<!doctype html><html><head><meta charset="utf-8"><title>chat</title>
<script type="module">
  import { createClient } from '${base}/sdk/plinth.js';
  const client = createClient('${base}', '${key}', { realtime: { maxReconnectDelayMs: 300 } });
  let room = null;
  const chat = { messages: [], typing: [], statuses: [] };
  chat.signIn = async (email, password) => {
    const { error } = await client.auth.signIn({ email, password });
    return error ? error.code : null;
  };
  chat.join = (key) => {
    room = client.channel('${ROOM}', { private: true, presenceKey: key })
      .on('broadcast', 'message', (p) => chat.messages.push(p.text))
      .on('presence', (state) => {
        chat.typing = Object.entries(state).filter(([, v]) => v.metas.some((m) => m.typing)).map(([k]) => k).sort();
      })
      .subscribe((status, error) => chat.statuses.push(error ? status + ':' + error.code : status));
  };
  chat.send = (text) => room.send('message', { text });
  chat.type = (on) => room.track({ typing: on });
  window.chat = chat;
</script></head><body>chat</body></html>`;
}

beforeAll(async () => {
  target = await freshDbTarget({ migrated: true });
  const a = await start(0);
  await start(1);
  await a.settings.updateAuth({ cors_origins: ['http://127.0.0.1:*'] });
  // As a migration runs them: the database's owner (realtime.messages is not the SQL runner's).
  await a.db.query(`
    create table public.room_members (room text not null, user_id uuid not null, primary key (room, user_id));
    alter table public.room_members enable row level security;
    create policy "members see their rooms" on public.room_members for select to authenticated using (user_id = auth.uid());
    grant select on public.room_members to authenticated;
    create policy "members join" on realtime.messages for select to authenticated
      using (exists (select 1 from public.room_members m where m.room = realtime.topic() and m.user_id = auth.uid()));
    create policy "members send" on realtime.messages for insert to authenticated
      with check (exists (select 1 from public.room_members m where m.room = realtime.topic() and m.user_id = auth.uid()))`);
  pages = createServer((req, res) => {
    const i = new URL(req.url ?? '/', 'http://x').searchParams.get('instance') === '1' ? 1 : 0;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page(i, a.keys.publicKey));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  for (const i of instances) await i.plinth?.close();
  await target?.cleanup();
});

/** A user (a member of the room or not), signed up through the API. */
async function user(name: string, member: boolean): Promise<string> {
  const addr = `${name}-${process.pid}@example.com`;
  const c = createClient(baseOf(0), instances[0].plinth?.keys.publicKey ?? '');
  const { data, error } = await c.auth.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  c.auth.dispose();
  if (member) await instances[0].plinth?.db.query('insert into public.room_members (room, user_id) values ($1, $2)', [ROOM, data?.user.id]);
  return addr;
}

/** A tab of its own (its own storage, so its own user) on instance `i`, signed in and joining the room. */
async function tab(addr: string, i: number): Promise<Page> {
  const context = await browser.newContext();
  const p = await context.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(e.message));
  await p.goto(`${app}/chat.html?instance=${i}`);
  await p.waitForFunction(() => window.chat !== undefined, undefined, { timeout: 10_000 });
  expect(await p.evaluate(([e, pw]) => window.chat.signIn(e, pw), [addr, PASSWORD] as const)).toBeNull();
  await p.evaluate((key) => window.chat.join(key), addr);
  await p.waitForFunction(() => window.chat.statuses.some((s) => s !== 'RECONNECTING'), undefined, { timeout: 30_000 });
  expect(errors).toEqual([]);
  return p;
}

const statuses = (p: Page) => p.evaluate(() => window.chat.statuses);
const typing = (p: Page) => p.evaluate(() => window.chat.typing);
const messages = (p: Page) => p.evaluate(() => window.chat.messages);
const send = async (p: Page, text: string) => expect(await p.evaluate((t) => window.chat.send(t), text)).toBe(true);

describe('a chat on a private channel in Chromium, across two instances (issue 37)', () => {
  it('members see each other typing and each other’s messages, an outsider cannot join, and so after an instance restarts', async () => {
    const [ada, bob, eve] = [await user('ada', true), await user('bob', true), await user('eve', false)];
    const ta = await tab(ada, 0);
    const tb = await tab(bob, 1);
    expect(await statuses(ta)).toEqual(['SUBSCRIBED']);
    expect(await statuses(tb)).toEqual(['SUBSCRIBED']);
    const te = await tab(eve, 0);
    expect(await statuses(te)).toEqual(['ERROR:forbidden']);

    await ta.evaluate(() => window.chat.type(true));
    await expect.poll(() => typing(tb), { timeout: 30_000 }).toEqual([ada]);
    await send(ta, 'hello from ada');
    await send(tb, 'hi ada, bob here');
    await expect.poll(() => messages(tb), { timeout: 30_000 }).toEqual(['hello from ada']);
    await expect.poll(() => messages(ta), { timeout: 30_000 }).toEqual(['hi ada, bob here']);

    // Bob's instance stops and starts again on its port; his tab stays open and its SDK rejoins.
    await instances[1].plinth?.close();
    instances[1].plinth = null;
    await tb.waitForFunction(() => window.chat.statuses.includes('RECONNECTING'), undefined, { timeout: 30_000 });
    await start(1);
    await tb.waitForFunction(
      () => window.chat.statuses.lastIndexOf('SUBSCRIBED') > window.chat.statuses.indexOf('RECONNECTING'),
      undefined,
      {
        timeout: 60_000,
      },
    );
    await tb.evaluate(() => window.chat.type(true));
    await expect.poll(() => typing(ta), { timeout: 30_000 }).toEqual([ada, bob].sort());
    await expect.poll(() => typing(tb), { timeout: 30_000 }).toEqual([ada, bob].sort());
    await send(tb, 'back');
    await send(ta, 'welcome back');
    await expect.poll(() => messages(ta), { timeout: 30_000 }).toEqual(['hi ada, bob here', 'back']);
    await expect.poll(() => messages(tb), { timeout: 30_000 }).toEqual(['hello from ada', 'welcome back']);
    // Eve's tab heard none of it.
    expect(await messages(te)).toEqual([]);
    expect(await typing(te)).toEqual([]);
  });
});
