import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The API explorer's relations and functions in Chromium (issues 22 and 26): ticking a relation
// of the OpenAPI document's x-plinth-relationships writes select= with the embedded rows, and
// the snippets (before sending) follow it; functions are listed with a field per argument, sent
// with POST or GET through the SDK's rpc(), their snippets are that request, and the cURL
// snippet run with real curl gets the same answer.

const run = promisify(execFile);
let s: ConsoleServer;
let w: Watched;
let page: Page;

beforeAll(async () => {
  s = await startConsole();
  const res = await s.t.sql(`
    create table authors (id int primary key, name text not null);
    create table posts (id int primary key, title text not null, author_id int references authors);
    insert into authors values (1, 'Ada'), (2, 'Grace');
    insert into posts values (10, 'Engines', 1), (11, 'Compilers', 2), (12, 'Notes', 1);
    grant select on authors, posts to anon;
    alter table authors enable row level security;
    alter table posts enable row level security;
    create policy everyone on authors for select to anon using (true);
    create policy everyone on posts for select to anon using (true);
    create function add(a int, b int default 10) returns int language sql immutable as 'select a + b';
    create function posts_by(author int) returns setof posts language sql stable as 'select * from posts where author_id = author order by id';
    grant execute on function add(int, int), posts_by(int) to anon;`);
  expect(res.statusCode, res.body).toBe(200);
  w = await openPage(await s.browser.newContext());
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

async function send(path: RegExp, method: string) {
  const answer = answerOf(page, path, method);
  await page.getByRole('button', { name: 'Send request' }).click();
  const res = await answer;
  const text = await res.text();
  await expect
    .poll(async () => JSON.stringify(JSON.parse((await page.getByTestId('response-body').textContent()) ?? 'null')))
    .toBe(JSON.stringify(JSON.parse(text)));
  return res;
}

async function snippet(kind: 'cURL' | 'SDK'): Promise<string> {
  await page.getByRole('tab', { name: kind }).click();
  return (await page.getByTestId(kind === 'cURL' ? 'snippet-curl' : 'snippet-sdk').textContent()) ?? '';
}

describe('API explorer: relations and functions', () => {
  it('embeds a relation picked from the document; the snippets follow before sending', async () => {
    await page.goto(`${s.url}/console/api/posts`);
    const pick = page.getByRole('group', { name: 'Embed related rows' });
    await pick.getByRole('checkbox', { name: /authors/ }).check();
    await expect.poll(() => page.getByLabel('Select (columns)').inputValue()).toBe('*,authors(*)');
    await expect.poll(() => page.getByTestId('snippets-title').textContent()).toBe('Snippets of the request as built (not sent yet)');
    await expect.poll(() => snippet('SDK')).toContain(".select('*,authors(*)')");
    expect(await snippet('cURL')).toContain('select=*,authors(*)');
    await page.getByLabel('Select (columns)').fill('id,title,authors(name)');
    await expect.poll(() => snippet('SDK')).toContain(".select('id,title,authors(name)')");
    expect(await pick.getByRole('checkbox', { name: /authors/ }).isChecked()).toBe(true);
    const res = await send(/^\/api\/v1\/db\/posts$/, 'GET');
    expect(new URL(res.url()).searchParams.get('select')).toBe('id,title,authors(name)');
    expect(await res.json()).toEqual([
      { id: 10, title: 'Engines', authors: { name: 'Ada' } },
      { id: 11, title: 'Compilers', authors: { name: 'Grace' } },
      { id: 12, title: 'Notes', authors: { name: 'Ada' } },
    ]);
    expect(page.url()).toContain('select=id%2Ctitle%2Cauthors%28name%29');
    await shot(page, 'api-relations', { phone: true });
    // Unticked: the relation leaves the select, the chosen columns stay.
    await pick.getByRole('checkbox', { name: /authors/ }).uncheck();
    await expect.poll(() => page.getByLabel('Select (columns)').inputValue()).toBe('id,title');

    // The other way: an author's posts, an array.
    await page.goto(`${s.url}/console/api/authors`);
    await page.getByRole('group', { name: 'Embed related rows' }).getByRole('checkbox', { name: /posts/ }).check();
    const many = await send(/^\/api\/v1\/db\/authors$/, 'GET');
    const rows = (await many.json()) as Array<{ id: number; posts: Array<{ id: number }> }>;
    expect(rows.find((r) => r.id === 1)?.posts.map((p) => p.id)).toEqual([10, 12]);
    w.expectClean();
  });

  it('calls a function with its argument fields, by POST and by GET; the snippets are the request, and curl gets the same', async () => {
    await page.goto(`${s.url}/console/api`);
    const fns = page.getByRole('list', { name: 'Functions' });
    await fns.getByRole('link', { name: /add/ }).click();
    await page.getByLabel(/^a integer/).fill('5');
    await expect.poll(() => snippet('SDK')).toContain("client\n  .rpc('add', { a: 5 })");
    expect(await snippet('cURL')).toContain(`-X POST '${s.url}/api/v1/rpc/add'`);
    const posted = await send(/^\/api\/v1\/rpc\/add$/, 'POST');
    expect(posted.request().postDataJSON()).toEqual({ a: 5 });
    expect(await posted.json()).toBe(15);
    expect(await page.getByTestId('snippets-title').textContent()).toBe('Snippets of the request sent');
    const curl = await snippet('cURL');
    const env: NodeJS.ProcessEnv = { ...process.env, PLINTH_PUBLIC_KEY: s.t.keys.publicKey };
    expect(JSON.parse((await run('bash', ['-c', curl], { env })).stdout)).toBe(15);

    await page.getByLabel(/^b integer/).fill('1');
    await page.getByLabel('Call with GET').check();
    await expect.poll(() => snippet('SDK')).toContain(".rpc('add', { a: 5, b: 1 }, { get: true })");
    expect(await page.getByTestId('endpoint-line').textContent()).toBe('GET /api/v1/rpc/add');
    const got = await send(/^\/api\/v1\/rpc\/add$/, 'GET');
    expect(new URL(got.url()).search).toBe('?a=5&b=1');
    expect(await got.json()).toBe(6);
    expect(JSON.parse((await run('bash', ['-c', await snippet('cURL')], { env })).stdout)).toBe(6);
    await shot(page, 'api-rpc', { phone: true });
    // The call is in the URL: a reload restores it.
    await page.reload();
    await expect.poll(() => page.getByLabel(/^a integer/).inputValue()).toBe('5');
    expect(await page.getByLabel('Call with GET').isChecked()).toBe(true);

    // A set-returning function: a limit after rpc(); a required argument left empty is said.
    await fns.getByRole('link', { name: /posts_by/ }).click();
    await expect.poll(() => page.getByTestId('snippets-missing').textContent()).toBe('No snippets yet: Give author (integer · int32).');
    await page.getByLabel(/^author integer/).fill('1');
    await page.getByLabel('Limit').fill('1');
    await expect.poll(() => snippet('SDK')).toContain(".rpc('posts_by', { author: 1 })\n  .limit(1)");
    const set = await send(/^\/api\/v1\/rpc\/posts_by$/, 'POST');
    expect(await set.json()).toEqual([{ id: 10, title: 'Engines', author_id: 1 }]);
    w.expectClean();
  });
});
