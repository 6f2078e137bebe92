import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The API explorer in Chromium: the endpoint list follows a table made in the SQL runner of
// another tab; try-it as anon, as a test user and with the secret key gets the real
// row-level-security answers; an unknown column gets the server's 400; the cURL snippet is
// the request the page sent, and running it (real curl) and running the SDK snippet (in a page
// that loads /sdk/plinth.js) send the same request and get the same JSON; the builder's URL
// restores it; no key or token is kept in the browser or the URL.

const run = promisify(execFile);
let s: ConsoleServer;
let w: Watched;
let page: Page;
const USER = { email: 'tester@example.com', password: 'correct horse battery' };

beforeAll(async () => {
  s = await startConsole();
  const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

/** The requests to the database REST API the page sends from now on. */
function watchDbRequests(p: Page): Request[] {
  const seen: Request[] = [];
  p.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/v1/db/')) seen.push(r);
  });
  return seen;
}

async function send(path: string | RegExp = /^\/api\/v1\/db\//, method = 'GET') {
  const answer = answerOf(page, path, method);
  await page.getByRole('button', { name: 'Send request' }).click();
  const res = await answer;
  await expect.poll(() => page.getByTestId('response-status').textContent()).toMatch(new RegExp(`^${res.status()}`));
  // The pane keeps the previous answer until the new one is drawn, often with the same status:
  // wait until it shows this answer's body.
  const text = await res.text();
  if (text) {
    const expected = JSON.stringify(JSON.parse(text));
    await expect.poll(async () => JSON.stringify(await body())).toBe(expected);
  }
  return res;
}

const body = async () => JSON.parse((await page.getByTestId('response-body').textContent()) ?? 'null');
const callAs = (name: string) => page.getByRole('radiogroup', { name: 'Call as' }).getByLabel(name).check();
const operation = (name: string) => page.getByRole('radiogroup', { name: 'Operation' }).locator('label', { hasText: name }).click();

async function snippet(kind: 'cURL' | 'SDK'): Promise<string> {
  await page.getByRole('tab', { name: kind }).click();
  return (await page.getByTestId(kind === 'cURL' ? 'snippet-curl' : 'snippet-sdk').textContent()) ?? '';
}

describe('API explorer', () => {
  it('lists a table made in the SQL runner of another tab, without a reload', async () => {
    await page.goto(`${s.url}/console/api`);
    await page.getByRole('navigation', { name: 'Endpoints' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Endpoints' }).textContent()).toContain('/signup');
    await page.evaluate(() => {
      (window as unknown as { stillHere: boolean }).stillHere = true;
    });
    const runner = await openPage(page.context());
    await runner.page.goto(`${s.url}/console/sql`);
    await runner.page.getByLabel('SQL editor').click();
    await runner.page.keyboard.insertText(`create table todos (
  id bigserial primary key,
  title text not null,
  tag text,
  done boolean not null default false,
  user_id uuid default auth.uid()
);
create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());`);
    const ran = answerOf(runner.page, '/api/v1/sql', 'POST');
    await runner.page.keyboard.press('ControlOrMeta+Enter');
    expect((await ran).status()).toBe(200);
    runner.expectClean();
    await runner.page.close();
    await page.bringToFront(); // back to the API page's tab, as a user would

    const link = page.getByRole('navigation', { name: 'Endpoints' }).getByRole('link', { name: 'todos', exact: true });
    await link.waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    await link.click();
    await page.getByRole('radiogroup', { name: 'Operation' }).waitFor();
    expect(await page.getByRole('radiogroup', { name: 'Operation' }).textContent()).toBe(
      'List rows GETRead one GETCreate POSTUpdate PATCHDelete DELETE',
    );
    const ops = page.getByRole('list', { name: 'Endpoints of todos' });
    expect(await ops.getByRole('link').allTextContents()).toEqual(['GETlist', 'GET/{pk}', 'POSTcreate', 'PATCHupdate', 'DELETEdelete']);
    await ops.getByRole('link', { name: /POST\s*create/ }).click();
    await expect.poll(() => page.getByRole('radio', { name: 'Create POST' }).isChecked()).toBe(true);
    expect(await page.getByTestId('endpoint-line').textContent()).toBe('POST /api/v1/db/todos');
    await ops.getByRole('link', { name: /GET\s*list/ }).click();
    await expect.poll(() => page.getByRole('radio', { name: 'List rows GET' }).isChecked()).toBe(true);
    await shot(page, 'api-table');
    w.expectClean();
  }, 120_000);

  it('try-it: anon gets [], a test user creates a row and lists only it, the secret key lists all', async () => {
    const seeded = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/db/todos',
      headers: s.t.as.service,
      payload: [{ title: 'someone else’s' }, { title: 'nobody’s', tag: 'b,c' }],
    });
    expect(seeded.statusCode).toBe(201);
    await page.goto(`${s.url}/console/api/todos`);
    await operation('List rows');
    const anon = await send();
    expect(anon.status()).toBe(200);
    expect(anon.request().headers().apikey).toBe(s.t.keys.publicKey);
    expect(await body()).toEqual([]);
    expect(await page.getByTestId('server-timing').textContent()).toMatch(/execute/);
    expect(await page.getByTestId('response-elapsed').textContent()).toMatch(/^\d+ ms$/);
    expect(await snippet('cURL')).toContain('-H "apikey: $PLINTH_PUBLIC_KEY"');
    await shot(page, 'api-anon-list');

    await callAs('Test user');
    await page.getByLabel('Test user email').fill(USER.email);
    await page.getByLabel('Test user password').fill(USER.password);
    const signup = answerOf(page, '/v1/auth/signup', 'POST');
    await page.getByRole('button', { name: 'Sign up' }).click();
    expect((await signup).status()).toBe(200);
    await page.getByRole('status').filter({ hasText: 'Signed up and signed in as tester@example.com.' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: /^Signed in as tester@example\.com [0-9a-f-]{36}$/ })
      .waitFor();
    expect(page.url()).toContain('as=user');

    await operation('Create');
    await page.getByLabel('JSON body').fill('{"title": "mine"}');
    const created = await send(/^\/api\/v1\/db\//, 'POST');
    expect(created.status()).toBe(201);
    const token = created.request().headers().authorization;
    expect(token).toMatch(/^Bearer ey/);
    const mine = await body();
    expect(mine).toMatchObject({ title: 'mine' });
    expect(mine.user_id).toMatch(/^[0-9a-f-]{36}$/);
    const curl = await snippet('cURL');
    expect(curl).toContain('-H "authorization: Bearer $PLINTH_USER_TOKEN"');
    expect(curl).not.toContain(token.slice(7));
    expect(await snippet('SDK')).toContain(
      `await client.auth.signIn({ email: '${USER.email}', password: process.env.PLINTH_USER_PASSWORD });`,
    );

    await operation('List rows');
    await send();
    expect((await body()).map((r: { title: string }) => r.title)).toEqual(['mine']);
    await shot(page, 'api-user-list');

    await callAs('Secret key');
    expect(await page.getByRole('button', { name: 'Send request' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByText('Reveal the secret key first').waitFor();
    await page.getByRole('button', { name: 'Reveal secret key' }).click();
    const all = await send();
    expect(all.request().headers().apikey).toBe(s.t.keys.secretKey);
    expect((await body()).map((r: { title: string }) => r.title).sort()).toEqual(['mine', 'nobody’s', 'someone else’s']);
    const secretCurl = await snippet('cURL');
    expect(secretCurl).toContain('-H "apikey: $PLINTH_SECRET_KEY"');
    expect(secretCurl).not.toContain(s.t.keys.secretKey);
    expect(await snippet('SDK')).toContain('process.env.PLINTH_SECRET_KEY');
    await shot(page, 'api-secret-list');

    // Nothing secret was kept: no key or token in storage, cookies readable by scripts, or the URL.
    const kept = await page.evaluate(async () => {
      const dump = (st: Storage) => Object.keys(st).map((k) => `${k}=${st.getItem(k)}`);
      const dbs = (await indexedDB.databases()).map((d) => d.name ?? '');
      return JSON.stringify({ local: dump(localStorage), session: dump(sessionStorage), dbs, cookie: document.cookie, url: location.href });
    });
    for (const secret of [s.t.keys.secretKey, token.slice(7), 'sk_', 'eyJ', USER.password]) expect(kept).not.toContain(secret);
    w.expectClean();
  }, 90_000);

  it("shows the server's 400 for an unknown column", async () => {
    w.allow(400);
    await page.goto(`${s.url}/console/api/todos?op=list&as=secret`);
    await page.getByRole('button', { name: 'Reveal secret key' }).click();
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 column').fill('colour');
    await page.getByLabel('Filter 1 value').fill('red');
    const res = await send();
    expect(res.status()).toBe(400);
    expect(await body()).toMatchObject({ code: 'column_not_found', message: 'The table "todos" has no column "colour".' });
    expect(await page.getByTestId('response-code').textContent()).toBe('column_not_found');
    await shot(page, 'api-unknown-column');
    w.expectClean();
  });

  it('the cURL snippet is the request sent; curl and the SDK snippet send it again and get the same JSON; a reload restores the builder', async () => {
    const seeded = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/db/todos',
      headers: s.t.as.service,
      payload: [
        { title: 'milk', tag: 'a', done: false },
        { title: 'mint', tag: 'b,c', done: false },
        { title: 'mild', tag: 'a', done: true },
        { title: 'bread', tag: 'a', done: false },
      ],
    });
    expect(seeded.statusCode).toBe(201);
    const seen = watchDbRequests(page);
    await page.goto(`${s.url}/console/api/todos?as=secret`);
    await page.getByRole('button', { name: 'Reveal secret key' }).click();
    await operation('List rows');
    const addFilter = async (i: number, column: string, op: string, value: string) => {
      await page.getByRole('button', { name: 'Add filter' }).click();
      await page.getByLabel(`Filter ${i} column`).fill(column);
      await page.getByLabel(`Filter ${i} operator`).selectOption(op);
      await page.getByLabel(`Filter ${i} value`).fill(value);
    };
    await addFilter(1, 'done', 'eq', 'false');
    await addFilter(2, 'tag', 'in', 'a,"b,c"');
    await addFilter(3, 'title', 'like', 'mi*');
    await page.getByRole('button', { name: 'Add sort column' }).click();
    await page.getByLabel('Order 1 column').fill('tag');
    await page.getByLabel('Order 1 direction').selectOption('desc');
    await page.getByRole('button', { name: 'Add sort column' }).click();
    await page.getByLabel('Order 2 column').fill('title');
    await page.getByLabel('Order 2 nulls').selectOption('last');
    await page.getByLabel('Select (columns)').fill('title,tag');
    await page.getByLabel('Limit').fill('5');
    await page.getByLabel('Offset').fill('0');
    await page.getByLabel('Count (Prefer: count=exact)').check();
    const res = await send();
    expect(res.status()).toBe(200);
    const shown = await body();
    expect(shown).toEqual([
      { title: 'mint', tag: 'b,c' },
      { title: 'milk', tag: 'a' },
    ]);
    expect(await page.getByTestId('content-range').textContent()).toBe('0-1/2');
    const sent = seen.at(-1) as Request;
    expect(sent.url()).toBe(
      `${s.url}/api/v1/db/todos?select=title,tag&eq.done=false&in.tag=a,%22b,c%22&like.title=mi*&order=tag.desc,title.asc.nullslast&limit=5&offset=0`,
    );

    // The cURL snippet names exactly that method, URL, headers and body.
    const curl = await snippet('cURL');
    await page.getByRole('button', { name: 'Copy the cURL snippet' }).click();
    // The copy finishes after the click (the clipboard write is asynchronous).
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(curl);
    await shot(page, 'api-snippet-curl');
    const env: NodeJS.ProcessEnv = { ...process.env, PLINTH_SECRET_KEY: s.t.keys.secretKey, PLINTH_PUBLIC_KEY: s.t.keys.publicKey };
    const words = await run('bash', ['-c', `printf '%s\\0' ${curl.replace(/ \\\n/g, ' ')}`], { env });
    const argv = words.stdout.split('\0').slice(0, -1);
    expect(argv.slice(0, 3)).toEqual(['curl', '-X', sent.method()]);
    expect(argv[3]).toBe(sent.url());
    const headers: Record<string, string> = {};
    for (let i = 4; i < argv.length; i += 2) {
      expect(argv[i]).toBe('-H');
      const [name, ...value] = argv[i + 1].split(': ');
      headers[name] = value.join(': ');
    }
    const browserSent = await sent.allHeaders();
    expect(headers).toEqual({ apikey: browserSent.apikey, prefer: browserSent.prefer });
    expect(headers).toEqual({ apikey: s.t.keys.secretKey, prefer: 'count=exact' });

    // Running it with real curl gets the same JSON.
    const out = await run('bash', ['-c', curl], { env });
    expect(JSON.parse(out.stdout)).toEqual(shown);

    // The SDK snippet, run in a page that loads /sdk/plinth.js, sends the same URL and body.
    const sdk = await snippet('SDK');
    expect(sdk).toContain(`createClient('${s.url}', process.env.PLINTH_SECRET_KEY)`);
    expect(sdk).toContain(".in('tag', ['a', 'b,c'])");
    const other = await page.context().newPage();
    await other.goto(`${s.url}/health`);
    const code = sdk.replace(/^import .*$/m, '').replace(/process\.env\.(\w+)/g, (_m, v: string) => JSON.stringify(env[v]));
    const fromSdk = (await other.evaluate(`(async () => {
      const { createClient } = await import('/sdk/plinth.js');
      const sent = [];
      const original = window.fetch.bind(window);
      window.fetch = (input, init) => { sent.push({ url: String(input), method: init?.method ?? 'GET', body: init?.body ?? null }); return original(input, init); };
      const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
      const result = await new AsyncFunction('createClient', ${JSON.stringify(`${code}\nreturn { data, error, count };`)})(createClient);
      return { sent, result };
    })()`)) as {
      sent: Array<{ url: string; method: string; body: string | null }>;
      result: { data: unknown; error: unknown; count: number };
    };
    await other.close();
    expect(fromSdk.sent).toEqual([{ url: sent.url(), method: 'GET', body: sent.postData() }]);
    expect(fromSdk.result).toEqual({ data: shown, error: null, count: 2 });

    // The builder is in the URL (no key in it): a reload restores it, and it sends the same request.
    expect(page.url()).not.toContain('sk_');
    await page.reload();
    await page.getByLabel('Filter 3 value').waitFor();
    expect(await page.getByLabel('Filter 2 operator').inputValue()).toBe('in');
    expect(await page.getByLabel('Filter 2 value').inputValue()).toBe('a,"b,c"');
    expect(await page.getByLabel('Order 1 direction').inputValue()).toBe('desc');
    expect(await page.getByLabel('Order 2 nulls').inputValue()).toBe('last');
    expect(await page.getByLabel('Select (columns)').inputValue()).toBe('title,tag');
    expect(await page.getByLabel('Limit').inputValue()).toBe('5');
    expect(await page.getByLabel('Count (Prefer: count=exact)').isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Secret key' }).isChecked()).toBe(true);
    await shot(page, 'api-restored');
    await page.getByRole('button', { name: 'Reveal secret key' }).click();
    await send();
    expect((seen.at(-1) as Request).url()).toBe(sent.url());
    w.expectClean();
  }, 90_000);

  it('reads one row by key, and tries an auth endpoint without putting its password in the URL', async () => {
    const row = (await s.t.app.inject({ url: '/api/v1/db/todos?eq.title=bread', headers: s.t.as.service })).json()[0];
    await page.goto(`${s.url}/console/api/todos?op=get&as=secret&pk=${row.id}`);
    await page.getByRole('button', { name: 'Reveal secret key' }).click();
    const one = await send(`/api/v1/db/todos/${row.id}`);
    expect(one.status()).toBe(200);
    expect(await body()).toMatchObject({ id: row.id, title: 'bread' });
    expect(await snippet('cURL')).toContain(`curl -X GET '${s.url}/api/v1/db/todos/${row.id}'`);
    const sdk = await snippet('SDK');
    expect(sdk).toContain(`.eq('id', ${row.id})\n  .single()`);
    expect(await page.getByText('The SDK has no call for GET /api/v1/db/todos/{pk}').count()).toBe(1);

    await page.getByRole('navigation', { name: 'Endpoints' }).getByRole('link', { name: 'POST /v1/auth/signin', exact: true }).click();
    await callAs('Anon (public key)');
    await page.getByLabel('JSON body').fill(JSON.stringify({ email: USER.email, password: USER.password }));
    const signin = await send('/v1/auth/signin', 'POST');
    expect(signin.status()).toBe(200);
    expect(await body()).toMatchObject({ token_type: 'bearer', user: { email: USER.email } });
    expect(await snippet('SDK')).toContain(`client.auth.signIn({ email: '${USER.email}', password:`);
    await expect.poll(() => decodeURIComponent(page.url())).toContain('endpoint=');
    // The body typed is mirrored into the URL a moment after the typing: once its email is there,
    // its password must not be.
    await expect.poll(() => decodeURIComponent(page.url())).toContain(USER.email);
    expect(decodeURIComponent(page.url())).not.toContain(USER.password);
    await shot(page, 'api-auth-signin');
    w.expectClean();
  });
});
