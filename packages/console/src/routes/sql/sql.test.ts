import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The SQL runner in Chromium: several statements with a tab each, the spec's users query (and
// its public.users shadowing rule), an error marked at its line inside a selection,
// truncation, copy as CSV, a slow answer that never overwrites a newer one, the completion
// list closed by a run, and saved queries kept in the project's database.

let s: ConsoleServer;
let w: Watched;
let page: Page;
beforeAll(async () => {
  s = await startConsole();
  const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
  await page.getByRole('link', { name: 'SQL runner' }).first().click();
  await page.getByLabel('SQL editor').waitFor();
});
afterAll(async () => {
  await s?.stop();
});

async function type(text: string) {
  const editor = page.getByLabel('SQL editor');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** Runs the editor's query (or selection) and answers its response: not the page's own read of the column list, which it may redo at any time. */
async function run() {
  const answer = page.waitForResponse(
    (r) =>
      new URL(r.url()).pathname === '/api/v1/sql' &&
      r.request().method() === 'POST' &&
      !String(r.request().postData()).includes('information_schema.columns'),
    { timeout: 20_000 },
  );
  await page.keyboard.press('ControlOrMeta+Enter');
  return answer;
}

describe('SQL runner', () => {
  it('runs several statements, one result tab each, with column names and types', async () => {
    await type(`create table todos (id bigserial primary key, title text not null, done boolean default false, user_id uuid default auth.uid());
create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());
insert into todos (title) values ('write the console'), ('test it');
select id, title, done from todos order by id;`);
    expect((await run()).status()).toBe(200);
    const tabs = page.getByRole('tablist', { name: 'Results, one per statement' }).getByRole('tab');
    await expect.poll(() => tabs.allTextContents()).toEqual(['1. CREATE TABLE', '2. CREATE POLICY', '3. INSERT', '4. SELECT']);
    // The script's last result is the tab open, without a click.
    expect(await tabs.nth(3).getAttribute('aria-selected')).toBe('true');
    const grid = page.getByRole('table', { name: 'Result 4: SELECT' });
    await expect.poll(() => grid.getByRole('columnheader').allTextContents()).toEqual(['id int8', 'title text', 'done bool']);
    expect(await grid.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual(['1', 'write the console', 'false']);
    await page.getByRole('button', { name: 'Copy result 4 as CSV' }).click();
    // The copy finishes after the click (the clipboard write is asynchronous).
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()))
      .toBe('id,title,done\r\n1,write the console,false\r\n2,test it,false');
    await shot(page, 'sql-statements');
    // The REST API serves the new table at once (the runner reloads the schema cache).
    const rest = await s.t.app.inject({ url: '/api/v1/db/todos', headers: s.t.as.service });
    expect(rest.json()).toHaveLength(2);
    w.expectClean();
  });

  it("offers the spec's users query, and reads auth.users by its full name once an app has its own public.users", async () => {
    const signup = await s.t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: s.t.as.anon,
      payload: { email: 'ada@example.com', password: 'correct horse battery' },
    });
    expect(signup.statusCode).toBe(200);
    await page.getByRole('button', { name: 'Example: users' }).click();
    await page.getByLabel('SQL editor').click();
    expect((await run()).status()).toBe(200);
    const grid = page.getByRole('table', { name: 'Result 1: SELECT' });
    // The answer is drawn a moment after it arrives.
    await expect
      .poll(() => grid.getByRole('columnheader').allTextContents())
      .toEqual(['id uuid', 'email text', 'created_at timestamptz', 'email_confirmed_at timestamptz']);
    await expect.poll(() => grid.textContent()).toContain('ada@example.com');
    await shot(page, 'sql-users-query');

    await type('create table public.users (id int primary key, handle text);');
    expect((await run()).status()).toBe(200);
    const columns = answerOf(page, '/api/v1/sql', 'POST');
    await page.reload(); // the completion list (and so the shadowing check) is read again
    await columns;
    // Right at once, whether or not the page has the new column list yet.
    await page.getByRole('button', { name: 'Example: users' }).click();
    await expect.poll(() => page.getByLabel('SQL editor').textContent()).toContain('from auth.users');
    await page.getByLabel('SQL editor').click();
    expect((await run()).status()).toBe(200);
    await expect.poll(() => page.getByRole('table', { name: 'Result 1: SELECT' }).textContent()).toContain('ada@example.com');
    await type('drop table public.users;');
    expect((await run()).status()).toBe(200);
    w.expectClean();
  });

  it('marks an error at its line when only a selection ran, with SQLSTATE', async () => {
    w.allow(400);
    await type(`select 1;
select 2;
select 3 as three;
select nope from todos;`);
    // Select lines 3 and 4 only.
    await page.keyboard.press('ControlOrMeta+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Home');
    await page.keyboard.press('ControlOrMeta+Shift+End');
    const res = await run();
    expect(res.status()).toBe(400);
    expect((await res.request().postDataJSON()).query).toBe('select 3 as three;\nselect nope from todos;');
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toMatch(/Error at line 4, column 8/);
    expect(await alert.textContent()).toMatch(/column "nope" does not exist/);
    expect(await alert.textContent()).toMatch(/SQLSTATE 42703/);
    const marked = page.locator('.cm-line').nth(3).locator('.cm-sql-error');
    expect(await marked.textContent()).toBe('nope');
    await shot(page, 'sql-error-in-selection');
    w.expectClean();
  });

  it('says "1000 of N" when a result is truncated', async () => {
    await type('select g, md5(g::text) as h from generate_series(1, 1500) g;');
    expect((await run()).status()).toBe(200);
    await expect.poll(() => page.getByTestId('result-summary').textContent()).toBe('1000 of 1500 rows (the first 1000 are shown)');
    expect(await page.getByRole('table', { name: 'Result 1: SELECT' }).getByRole('row').count()).toBe(1001);
    await shot(page, 'sql-truncated');
    w.expectClean();
  });

  it('never lets a slow answer overwrite a newer one, and keeps a history in this browser', async () => {
    // Hold the first run's answer until the second one has been shown.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let first = true;
    await page.route('**/api/v1/sql', async (route) => {
      if (!first) return route.continue();
      first = false;
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await type("select 'slow' as answer;");
    await page.keyboard.press('ControlOrMeta+Enter');
    await type("select 'fast' as answer;");
    expect((await run()).status()).toBe(200);
    const grid = page.getByRole('table', { name: 'Result 1: SELECT' });
    await expect.poll(() => grid.textContent()).toContain('fast');
    const late = answerOf(page, '/api/v1/sql', 'POST');
    release();
    await late;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await grid.textContent()).toContain('fast');
    expect(await grid.textContent()).not.toContain('slow');
    await page.unroute('**/api/v1/sql');

    const history = page.getByRole('region', { name: 'History (this browser)' });
    expect(await history.getByRole('button').first().textContent()).toContain("select 'fast' as answer;");
    await history.getByRole('button', { name: "Load: select 'slow' as answer;" }).click();
    await expect.poll(() => page.getByLabel('SQL editor').textContent()).toBe("select 'slow' as answer;");
    const stored = await page.evaluate(() => localStorage.getItem('plinth.console.sql-history') ?? '');
    expect(stored).toContain('fast');
    expect(stored).not.toContain('sk_');
    await shot(page, 'sql-history');
    w.expectClean();
  });

  it('closes the completion list when a run starts', async () => {
    await type('select * from ');
    await page.keyboard.type('tod');
    const completions = page.locator('.cm-tooltip-autocomplete');
    await completions.waitFor();
    expect(await completions.textContent()).toContain('todos');
    await page.keyboard.press('Escape');
    await page.keyboard.type('o');
    await completions.waitFor();
    w.allow(400);
    expect((await run()).status()).toBe(400); // "select * from todo": no such table, and no list left over it
    await completions.waitFor({ state: 'detached' });
  });

  it('saves a named query in the project, finds it after a reload, replaces it by name, and deletes it', async () => {
    const saved = page.getByRole('region', { name: 'Saved queries (this project)' });
    await saved.getByText('No saved query yet').waitFor();
    await type('select count(*) from todos;');
    await saved.getByLabel('Name for the editor’s query').fill('todo count');
    let answer = answerOf(page, '/api/v1/sql/saved', 'POST');
    await saved.getByRole('button', { name: 'Save query' }).click();
    expect((await answer).status()).toBe(201);
    await saved.getByRole('button', { name: 'Load todo count' }).waitFor();

    await page.reload();
    await type('select 1;');
    await saved.getByRole('button', { name: 'Load todo count' }).click();
    await expect.poll(() => page.getByLabel('SQL editor').textContent()).toBe('select count(*) from todos;');
    await shot(page, 'sql-saved-queries');

    // The same name again: offered to replace it.
    w.allow(409);
    await type('select count(*) from todos where done;');
    await saved.getByLabel('Name for the editor’s query').fill('todo count');
    answer = answerOf(page, '/api/v1/sql/saved', 'POST');
    await saved.getByRole('button', { name: 'Save query' }).click();
    expect((await answer).status()).toBe(409);
    answer = answerOf(page, /^\/api\/v1\/sql\/saved\/[0-9a-f-]{36}$/, 'PATCH');
    await saved.getByRole('button', { name: 'Replace it with the editor’s query' }).click();
    expect((await answer).status()).toBe(200);
    const stored = (await s.t.app.inject({ url: '/api/v1/sql/saved', headers: s.t.as.service })).json();
    expect(stored).toMatchObject([{ name: 'todo count', query: 'select count(*) from todos where done;' }]);

    await saved.getByRole('button', { name: 'Delete todo count' }).click();
    answer = answerOf(page, /^\/api\/v1\/sql\/saved\/[0-9a-f-]{36}$/, 'DELETE');
    await page.getByRole('button', { name: 'Delete saved query' }).click();
    expect((await answer).status()).toBe(204);
    await saved.getByText('No saved query yet').waitFor();
    w.expectClean();
  });
});
