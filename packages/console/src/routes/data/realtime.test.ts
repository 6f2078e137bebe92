import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// A table's Realtime tab in Chromium (issue 23): capture switched on and off with the server's
// PUT/DELETE /api/v1/realtime/tables/{t} (a table without a primary key refused in the server's
// words), and the live view, through the SDK's realtime client as the chosen caller, shows
// each insert, update and delete made elsewhere (here: SQL, as psql would), then says so when
// capture is switched off under it.

let s: ConsoleServer;
let w: Watched;
let page: Page;

beforeAll(async () => {
  s = await startConsole();
  const res = await s.t.sql(`
    create table feed (id int primary key, body text not null);
    grant select on feed to anon;
    alter table feed enable row level security;
    create policy everyone on feed for select to anon using (true);
    create table loose (body text);
    create table mine (id int primary key, owner uuid not null default auth.uid(), body text);
    grant select on mine to authenticated;
    alter table mine enable row level security;
    create policy own on mine for select to authenticated using (owner = auth.uid());
    select realtime.enable('mine');`);
  expect(res.statusCode, res.body).toBe(200);
  w = await openPage(await s.browser.newContext());
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

const enabled = async (table: string) => {
  const res = await s.t.app.inject({ method: 'GET', url: '/api/v1/realtime/tables', headers: s.t.as.service });
  return (res.json() as Array<{ table: string; enabled: boolean }>).find((t) => t.table === table)?.enabled;
};

describe('realtime tab', () => {
  it('switches capture on, shows changes made elsewhere live, and says so when capture goes off', async () => {
    await page.goto(`${s.url}/console/data/feed?view=realtime`);
    const capture = page.getByRole('switch', { name: 'Push the changes of feed to clients' });
    await capture.waitFor();
    expect(await capture.isChecked()).toBe(false);
    expect(await page.getByRole('button', { name: 'Watch changes' }).isDisabled()).toBe(true);
    const on = answerOf(page, '/api/v1/realtime/tables/feed', 'PUT');
    await capture.click();
    expect((await on).status()).toBe(200);
    await expect.poll(() => capture.isChecked()).toBe(true);
    expect(await enabled('feed')).toBe(true);

    await page.getByRole('button', { name: 'Watch changes' }).click();
    const status = page.getByTestId('realtime-status');
    await expect.poll(() => status.textContent()).toBe('Live: 0 changes received');
    expect((await s.t.sql(`insert into feed values (1, 'hello')`)).statusCode).toBe(200);
    const changes = page.getByRole('list', { name: 'Changes' });
    await expect.poll(() => changes.getByRole('listitem').first().textContent()).toMatch(/^insert#\d+\{"id":1,"body":"hello"\}$/);
    expect((await s.t.sql(`update feed set body = 'edited' where id = 1; delete from feed where id = 1`)).statusCode).toBe(200);
    await expect.poll(() => status.textContent()).toBe('Live: 3 changes received');
    const ops = await changes.getByRole('listitem').locator('code').first().allTextContents();
    expect(ops).toEqual(['delete']);
    expect(await changes.getByRole('listitem').nth(1).textContent()).toContain('{"id":1,"body":"edited"}');
    await shot(page, 'data-realtime', { phone: true });

    // Capture off under the live view: the subscription ends with the server's code.
    const off = answerOf(page, '/api/v1/realtime/tables/feed', 'DELETE');
    await capture.click();
    expect((await off).status()).toBe(200);
    await expect.poll(() => status.textContent()).toMatch(/^Refused: .*\(realtime_disabled\)$/);
    expect(await enabled('feed')).toBe(false);
    w.expectClean();
  });

  it('as a test user, the live view shows only the changes their policies let them read', async () => {
    await page.goto(`${s.url}/console/data/mine?view=realtime`);
    await expect.poll(() => page.getByRole('switch', { name: 'Push the changes of mine to clients' }).isChecked()).toBe(true);
    await page.getByRole('radiogroup', { name: 'Call as' }).getByLabel('Test user').check();
    await page.getByLabel('Test user email').fill('watcher@example.com');
    await page.getByLabel('Test user password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    const signedIn = page.getByRole('status').filter({ hasText: /^Signed in as watcher@example\.com [0-9a-f-]{36}$/ });
    await signedIn.waitFor();
    const uid = /([0-9a-f-]{36})$/.exec((await signedIn.textContent()) ?? '')?.[1];
    await page.getByRole('button', { name: 'Watch changes' }).click();
    const status = page.getByTestId('realtime-status');
    await expect.poll(() => status.textContent()).toBe('Live: 0 changes received');
    // Someone else's row first, then theirs: only theirs arrives.
    const other = '00000000-0000-4000-8000-000000000001';
    expect((await s.t.sql(`insert into mine values (1, '${other}', 'not yours')`)).statusCode).toBe(200);
    expect((await s.t.sql(`insert into mine values (2, '${uid}', 'yours')`)).statusCode).toBe(200);
    await expect.poll(() => status.textContent()).toBe('Live: 1 change received');
    expect(await page.getByRole('list', { name: 'Changes' }).textContent()).toContain('"body":"yours"');
    expect(await page.getByRole('list', { name: 'Changes' }).textContent()).not.toContain('not yours');
    await shot(page, 'data-realtime-user');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => status.textContent()).toBe('Not watching.');
    w.expectClean();
  });

  it('a table without a primary key is refused in the server’s words', async () => {
    w.allow(400);
    await page.goto(`${s.url}/console/data/loose?view=realtime`);
    const capture = page.getByRole('switch', { name: 'Push the changes of loose to clients' });
    const refused = answerOf(page, '/api/v1/realtime/tables/loose', 'PUT');
    await capture.click();
    expect((await refused).status()).toBe(400);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/primary key.*\(invalid_parameter\)$/);
    expect(await capture.isChecked()).toBe(false);
    await shot(page, 'data-realtime-refused');
    w.expectClean();
  });
});
