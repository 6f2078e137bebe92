import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlinthClient } from '../../src/index.js';
import { clientOf, type E2eServer, email, startServer, storageKey } from './server.js';
import { launchChromium } from '../../../server/test/chromium.js';

// Items 12-15: the bundle the server hosts, imported by pages of another origin in Debian's
// Chromium (playwright-core), against the real server. Two tabs are two pages of one browser
// context: they share localStorage, BroadcastChannel and navigator.locks like two real tabs.

interface PageEvent {
  event: string;
  access_token: string | null;
  refresh_token: string | null;
  email: string | null;
}

declare global {
  interface Window {
    plinth: { client: PlinthClient; events: PageEvent[] };
    storageWrites: string[];
  }
}

const PASSWORD = 'correct horse battery';
let s: E2eServer;
let pages: Server;
/**
 * The app's origin: another port of 127.0.0.1, allowed by `cors_origins: ['http://127.0.0.1:*']`
 * (local pages in general are not: `cors_allow_localhost` is off here, see cors-browser.test.ts).
 */
let app: string;
let browser: Browser;

/**
 * The app page. Flags in the query delete Web APIs before the SDK loads (`nolocks`, `nobc`);
 * the SDK is imported from the server like a site without a bundler would.
 */
function appPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>plinth e2e</title>
<script>
  const flags = new URLSearchParams(location.search);
  if (flags.has('nolocks')) delete Navigator.prototype.locks;
  if (flags.has('nobc')) delete window.BroadcastChannel;
  // Which localStorage keys the page writes (the storage lease lock shows up as "<key>.lock").
  window.storageWrites = [];
  const setItem = Storage.prototype.setItem;
  Storage.prototype.setItem = function (key, value) {
    window.storageWrites.push(key);
    return setItem.call(this, key, value);
  };
</script>
<script type="module">
  import { createClient } from '${s.url}/sdk/plinth.js';
  const client = createClient('${s.url}', '${s.publicKey}');
  const events = [];
  client.auth.onAuthStateChange((event, session) => {
    events.push({ event, access_token: session?.access_token ?? null, refresh_token: session?.refresh_token ?? null, email: session?.user?.email ?? null });
  });
  window.plinth = { client, events };
</script></head><body>plinth e2e</body></html>`;
}

beforeAll(async () => {
  s = await startServer({ cors_origins: ['http://127.0.0.1:*'], cors_allow_localhost: false });
  const res = await s.t.sql(`
    create table todos (id bigserial primary key, title text not null, user_id uuid default auth.uid());
    create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());`);
  expect(res.statusCode, res.body).toBe(200);
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(appPage());
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await s?.t.stop();
});

/** A new tab on the app page; resolves once the SDK is loaded and INITIAL_SESSION delivered. */
async function open(context: BrowserContext, path = '/app.html', errors: string[] = []): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${app}${path}`);
  await initialSession(page);
  return page;
}

async function initialSession(page: Page): Promise<void> {
  await page.waitForFunction(() => window.plinth?.events.some((e) => e.event === 'INITIAL_SESSION'), undefined, { timeout: 10_000 });
}

/** Waits until the tab has delivered `event` `times` times. */
async function delivered(page: Page, event: string, times = 1): Promise<void> {
  await page.waitForFunction(([name, n]) => window.plinth.events.filter((e) => e.event === name).length >= n, [event, times] as const, {
    timeout: 10_000,
  });
}

const names = (page: Page) => page.evaluate(() => window.plinth.events.map((e) => e.event));
const session = (page: Page) => page.evaluate(async () => (await window.plinth.client.auth.getSession()).data?.session ?? null);
const stored = (page: Page, key: string) => page.evaluate((k) => localStorage.getItem(k), key);
/**
 * Waits until another tab's removal of `key` reached this tab's localStorage: the browser syncs
 * storage between tabs apart from BroadcastChannel messages, so SIGNED_OUT may arrive first.
 */
const removed = (page: Page, key: string) =>
  page.waitForFunction((k) => localStorage.getItem(k) === null, key, { timeout: 30_000 }).then(() => stored(page, key));

/** A user made from Node, so each scenario starts with its own account. */
async function newUser(tag: string): Promise<string> {
  const addr = email(tag);
  const c = clientOf(s);
  expect((await c.auth.signUp({ email: addr, password: PASSWORD })).error).toBeNull();
  c.auth.dispose();
  return addr;
}

function signIn(page: Page, addr: string) {
  return page.evaluate(([e, p]) => window.plinth.client.auth.signIn({ email: e, password: p }), [addr, PASSWORD] as const);
}

describe('a page of another origin (items 12, 13)', () => {
  it('cannot call the API while its origin is not in cors_origins (network_error), though it may load the SDK', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // `localhost` is another origin than `127.0.0.1`, and not allowed.
      await page.goto(`${app.replace('127.0.0.1', 'localhost')}/app.html`);
      await initialSession(page);
      const res = await page.evaluate(() => window.plinth.client.auth.signIn({ email: 'a@example.com', password: 'whatever it is' }));
      expect(res.data).toBeNull();
      expect(res.error).toMatchObject({ code: 'network_error', status: 0 });
    } finally {
      await context.close();
    }
  });

  it('signs up, writes and reads its own rows under RLS, refreshes, signs out and in again', async () => {
    const other = clientOf(s);
    await other.auth.signUp({ email: email('other'), password: PASSWORD });
    expect((await other.from('todos').insert({ title: 'not yours' })).error).toBeNull();
    other.auth.dispose();

    const context = await browser.newContext();
    const errors: string[] = [];
    try {
      const page = await open(context, '/app.html', errors);
      const addr = email('page');
      const out = await page.evaluate(
        async ([addr, password]) => {
          const { client } = window.plinth;
          const up = await client.auth.signUp({ email: addr, password });
          const inserted = await client.from('todos').insert({ title: 'from chromium' });
          const mine = await client.from('todos').select('title,user_id');
          const refreshed = await client.auth.refreshSession();
          const afterRefresh = await client.from('todos').select('title', { count: 'exact' });
          await client.auth.signOut();
          const signedOut = await client.from('todos').select('title');
          const again = await client.auth.signIn({ email: addr, password });
          const stillMine = await client.from('todos').select('title');
          return { up, inserted, mine, refreshed, afterRefresh, signedOut, again, stillMine };
        },
        [addr, PASSWORD] as const,
      );
      const userId = out.up.data!.user.id;
      expect(out.up.data!.session!.user.email).toBe(addr);
      expect(out.inserted).toMatchObject({ error: null, status: 201, data: { title: 'from chromium', user_id: userId } });
      expect(out.mine.data).toEqual([{ title: 'from chromium', user_id: userId }]);
      expect(out.refreshed.error).toBeNull();
      expect(out.refreshed.data!.session.refresh_token).not.toBe(out.up.data!.session!.refresh_token);
      expect(out.afterRefresh).toMatchObject({ data: [{ title: 'from chromium' }], count: 1 });
      expect(out.signedOut).toMatchObject({ data: [], error: null });
      expect(out.again.error).toBeNull();
      expect(out.stillMine.data).toEqual([{ title: 'from chromium' }]);
      // Events reach subscribers in a later task than the call that caused them: the last one first.
      await delivered(page, 'SIGNED_IN', 2);
      expect(await names(page)).toEqual(['INITIAL_SESSION', 'SIGNED_IN', 'TOKEN_REFRESHED', 'SIGNED_OUT', 'SIGNED_IN']);
      // The session lives in localStorage under the project's key.
      const kept = JSON.parse(String(await stored(page, storageKey(s))));
      expect(kept.refresh_token).toBe(out.again.data!.session.refresh_token);
      // The database agrees on who owns the row.
      const rows = (await s.t.sql('select title, user_id from todos order by id')).json().results[0].rows;
      expect(rows).toContainEqual({ title: 'from chromium', user_id: userId });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

const variants = [
  { name: 'navigator.locks and BroadcastChannel', query: '', apis: ['function', 'object'] },
  { name: 'no navigator.locks (storage lease lock)', query: '?nolocks', apis: ['function', 'undefined'] },
  { name: 'no BroadcastChannel (storage events)', query: '?nobc', apis: ['undefined', 'object'] },
];

describe.each(variants)('two tabs, $name (items 13, 14)', ({ query, apis }) => {
  it('share sign-in, one refresh when the token is due in both, a reload, sign-out, and a refused refresh', async () => {
    const context = await browser.newContext();
    // The tabs' clock, so the token can come due in both at once (see below).
    await context.clock.install();
    const errors: string[] = [];
    const refreshes: string[] = [];
    context.on('request', (req) => {
      if (req.method() === 'POST' && req.url().endsWith('/v1/auth/refresh')) refreshes.push(req.postData() ?? '');
    });
    try {
      const a = await open(context, `/app.html${query}`, errors);
      const b = await open(context, `/app.html${query}`, errors);
      expect(await a.evaluate(() => [typeof BroadcastChannel, typeof navigator.locks])).toEqual(apis);
      const key = storageKey(s);
      const addr = await newUser('tabs');

      // Sign in in A: B hears SIGNED_IN with the same session.
      const signedIn = await signIn(a, addr);
      expect(signedIn.error).toBeNull();
      // Storing the session took the cross-tab lock: navigator.locks, or else the storage lease.
      expect((await a.evaluate(() => window.storageWrites)).includes(`${key}.lock`)).toBe(query === '?nolocks');
      await delivered(b, 'SIGNED_IN');
      const first = signedIn.data!.session;
      expect((await b.evaluate(() => window.plinth.events.at(-1)))!.refresh_token).toBe(first.refresh_token);
      expect((await session(b))!.refresh_token).toBe(first.refresh_token);
      await a.evaluate(() => window.plinth.client.from('todos').insert({ title: 'tab row' }));

      // An hour passes for the server and both tabs (the laptop slept): the token is 5 s from
      // expiry, so both tabs refresh before they query, at the same moment.
      const due = (first.expires_at - 5) * 1000;
      s.t.clock.advance(due - s.t.clock.now());
      await context.clock.setSystemTime(due);
      const [ra, rb] = await Promise.all([
        a.evaluate(() => window.plinth.client.from('todos').select('title')),
        b.evaluate(() => window.plinth.client.from('todos').select('title')),
      ]);
      expect(ra).toMatchObject({ data: [{ title: 'tab row' }], error: null });
      expect(rb).toMatchObject({ data: [{ title: 'tab row' }], error: null });
      await delivered(a, 'TOKEN_REFRESHED');
      await delivered(b, 'TOKEN_REFRESHED');
      // Chromium may hand the lock over before B's localStorage shows A's write; B then presents
      // the same refresh token once more and the server's grace answers it (test/README.md, 13).
      expect(refreshes.length).toBeGreaterThanOrEqual(1);
      expect(refreshes.length).toBeLessThanOrEqual(2);
      expect(new Set(refreshes)).toEqual(new Set([JSON.stringify({ refresh_token: first.refresh_token })]));
      const [sa, sb] = [await session(a), await session(b)];
      expect(sa!.refresh_token).not.toBe(first.refresh_token);
      expect(sb!.refresh_token).toBe(sa!.refresh_token);
      expect(JSON.parse(String(await stored(a, key))).refresh_token).toBe(sa!.refresh_token);
      for (const tab of [a, b]) {
        const events = await names(tab);
        expect(events.filter((e) => e === 'TOKEN_REFRESHED')).toHaveLength(1);
        expect(events).not.toContain('SIGNED_OUT');
      }

      // A reload keeps the session.
      await b.reload();
      await initialSession(b);
      const afterReload = await b.evaluate(() => window.plinth.events[0]);
      expect(afterReload).toMatchObject({ event: 'INITIAL_SESSION', refresh_token: sa!.refresh_token, email: addr });
      expect((await b.evaluate(() => window.plinth.client.auth.getUser())).data!.user.email).toBe(addr);

      // Sign out in B: A hears SIGNED_OUT, the storage is empty.
      await b.evaluate(() => window.plinth.client.auth.signOut());
      await delivered(a, 'SIGNED_OUT');
      expect(await session(a)).toBeNull();
      expect(await removed(a, key)).toBeNull();
      expect((await a.evaluate(() => window.plinth.client.from('todos').select('title'))).data).toEqual([]);

      // A refused refresh in one tab signs both out.
      expect((await signIn(a, addr)).error).toBeNull();
      await delivered(b, 'SIGNED_IN'); // B's first since its reload
      const elsewhere = clientOf(s);
      await elsewhere.auth.signIn({ email: addr, password: PASSWORD });
      await elsewhere.auth.signOut({ scope: 'global' });
      const refused = await a.evaluate(() => window.plinth.client.auth.refreshSession());
      expect(refused.error).toMatchObject({ code: 'invalid_refresh_token', status: 401 });
      await delivered(a, 'SIGNED_OUT', 2);
      await delivered(b, 'SIGNED_OUT', 2);
      expect(await session(b)).toBeNull();
      expect(await removed(b, key)).toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the OAuth redirect page (item 15)', () => {
  it('handleOAuthCallback() signs in from the fragment, removes it from the address bar, and a reload does not sign in again', async () => {
    const addr = await newUser('oauth');
    // A real token set of this user, as the server's callback would put in the fragment.
    const node = clientOf(s);
    const { data } = await node.auth.signIn({ email: addr, password: PASSWORD });
    node.auth.dispose();
    const tokens = data!.session;
    const fragment = `access_token=${tokens.access_token}&refresh_token=${tokens.refresh_token}&token_type=bearer&expires_in=3600`;

    const context = await browser.newContext();
    const errors: string[] = [];
    try {
      // The tab starts the sign-in (its mark goes into this tab's sessionStorage); the trip to
      // the provider is skipped and the tab lands where the server's final redirect sends it.
      const page = await open(context, '/callback?next=home', errors);
      const started = await page.evaluate(
        (to) => window.plinth.client.auth.signInWithOAuth('google', { redirectTo: to, skipBrowserRedirect: true }),
        `${app}/callback?next=home`,
      );
      const landing = new URL(started.data!.url).searchParams.get('redirect_url');
      expect(landing).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?next=home&plinth_flow=[0-9a-f]{32}$/);
      await page.goto(`${landing}#${fragment}`);
      await initialSession(page);
      expect(await page.evaluate(() => location.hash)).not.toBe('');
      const res = await page.evaluate(() => window.plinth.client.auth.handleOAuthCallback());
      expect(res.error).toBeNull();
      expect(res.data!.user.email).toBe(addr);
      expect(res.data!.session).toMatchObject({
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        token_type: 'bearer',
      });
      // The fragment and the mark are gone from the address bar.
      expect(page.url()).toBe(`${app}/callback?next=home`);
      expect(await page.evaluate(() => location.hash)).toBe('');
      await delivered(page, 'SIGNED_IN');
      expect(await names(page)).toEqual(['INITIAL_SESSION', 'SIGNED_IN']);
      expect(JSON.parse(String(await stored(page, storageKey(s)))).refresh_token).toBe(tokens.refresh_token);
      expect((await page.evaluate(() => window.plinth.client.auth.getUser())).data!.user.email).toBe(addr);

      await page.reload();
      await initialSession(page);
      expect(await page.evaluate(() => window.plinth.events[0])).toMatchObject({
        event: 'INITIAL_SESSION',
        refresh_token: tokens.refresh_token,
      });
      const again = await page.evaluate(() => window.plinth.client.auth.handleOAuthCallback());
      expect(again.error).toMatchObject({ code: 'oauth_callback_missing', status: 0 });
      expect(await names(page)).toEqual(['INITIAL_SESSION']);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('tokens in the fragment of a sign-in this tab did not start are refused (login CSRF), and removed', async () => {
    const addr = await newUser('csrf');
    const node = clientOf(s);
    const { data } = await node.auth.signIn({ email: addr, password: PASSWORD });
    node.auth.dispose();
    const fragment = `access_token=${data!.session.access_token}&refresh_token=${data!.session.refresh_token}&token_type=bearer&expires_in=3600`;
    const context = await browser.newContext();
    try {
      const page = await open(context, `/callback?plinth_flow=${'a'.repeat(32)}#${fragment}`);
      const res = await page.evaluate(() => window.plinth.client.auth.handleOAuthCallback());
      expect(res.error).toMatchObject({ code: 'oauth_flow_mismatch', status: 0 });
      expect(await session(page)).toBeNull();
      expect(page.url()).toBe(`${app}/callback`);
    } finally {
      await context.close();
    }
  });

  it('an #error= fragment comes back as the error, signs nobody in, and is removed too', async () => {
    const context = await browser.newContext();
    try {
      const page = await open(context, '/callback#error=access_denied&error_description=The+user+said+no');
      const res = await page.evaluate(() => window.plinth.client.auth.handleOAuthCallback());
      expect(res).toEqual({ data: null, error: { code: 'access_denied', message: 'The user said no', status: 0 } });
      expect(page.url()).toBe(`${app}/callback`);
      expect(await session(page)).toBeNull();
    } finally {
      await context.close();
    }
  });
});
