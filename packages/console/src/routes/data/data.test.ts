import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The table browser in Chromium: 1000 rows in a virtualized grid (only the visible rows are in
// the page), the total count, server-side filter, sort and pages, an edit of a cell and of a
// JSON cell that reach the database, a refused write with the server's code and message, an
// insert, and a delete after a confirmation.

let s: ConsoleServer;
let w: Watched;
let page: Page;

async function sql<T = Record<string, unknown>>(query: string): Promise<T[]> {
  const res = await s.t.sql(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().results.at(-1).rows as T[];
}

beforeAll(async () => {
  s = await startConsole();
  await sql(`create table items (
    id bigserial primary key,
    name text not null,
    qty int not null default 0 check (qty >= 0),
    meta jsonb,
    tags text[],
    seen_at timestamptz
  );
  insert into items (name, qty, meta, tags)
    select 'item ' || g, g % 7, jsonb_build_object('n', g, 'even', g % 2 = 0), array['t' || (g % 3)]
    from generate_series(1, 1000) g;
  create view cheap as select id, name from items where qty = 0;`);
  const context = await s.browser.newContext();
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

const summary = () => page.getByTestId('rows-summary').textContent();
const grid = () => page.getByRole('table', { name: 'Rows of items' });
const rowCount = () => grid().locator('tbody tr[aria-rowindex]').count();

describe('table browser', () => {
  it('shows 1000 rows in a virtualized grid with the total count and the column types', async () => {
    await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Table browser' }).click();
    await page.getByRole('link', { name: 'items' }).click();
    await expect.poll(summary).toBe('Rows 1–100 of 1000');
    expect(await grid().getByRole('columnheader').allTextContents()).toEqual([
      'id int8key▲',
      'name text',
      'qty int4',
      'meta jsonb',
      'tags text[]',
      'seen_at timestamptz',
      'Actions',
    ]);
    const rows = answerOf(page, '/api/v1/db/items');
    await page.getByLabel('Rows per page').selectOption('1000');
    const res = await rows;
    expect(res.request().headers().prefer).toBe('count=exact');
    expect(res.request().headers().apikey).toBe(s.t.keys.secretKey);
    expect(new URL(res.url()).searchParams.get('limit')).toBe('1000');
    await expect.poll(summary).toBe('Rows 1–1000 of 1000');
    expect(page.url()).toContain('size=1000');
    // Only the rows in view (and a margin) are in the page, never all 1000.
    const rendered = await rowCount();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(100);
    expect(await grid().locator('tbody tr[aria-rowindex="2"] td').first().textContent()).toBe('1');
    await shot(page, 'data-grid');
    await page.getByTestId('grid-scroller').evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await grid().locator('tbody tr[aria-rowindex="1001"]').waitFor();
    expect(await grid().locator('tbody tr[aria-rowindex="1001"] td').first().textContent()).toBe('1000');
    expect(await rowCount()).toBeLessThan(100);
    // A JSON cell reads as JSON.
    expect(await grid().locator('tbody tr[aria-rowindex="1001"] td').nth(3).textContent()).toBe('{"n":1000,"even":true}');
    w.expectClean();
  });

  it('filters, sorts and pages on the server', async () => {
    await page.goto(`${s.url}/console/data/items?size=25`);
    await expect.poll(summary).toBe('Rows 1–25 of 1000');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 column').fill('qty');
    await page.getByLabel('Filter 1 operator').selectOption('eq');
    await page.getByLabel('Filter 1 value').fill('3');
    const filtered = answerOf(page, '/api/v1/db/items');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    expect(new URL((await filtered).url()).searchParams.get('eq.qty')).toBe('3');
    await expect.poll(summary).toBe('Rows 1–25 of 143');
    const sorted = answerOf(page, '/api/v1/db/items');
    await grid()
      .getByRole('button', { name: /^name text/ })
      .click();
    expect(new URL((await sorted).url()).searchParams.get('order')).toBe('name.asc');
    await expect.poll(() => grid().getByRole('columnheader', { name: /^name/ }).getAttribute('aria-sort')).toBe('ascending');
    // Text order: 'item 1000' < 'item 101' < … (qty 3 rows: 3, 10, 17, …, 997, 1004 is out).
    await expect.poll(() => grid().locator('tbody tr[aria-rowindex="2"] td').nth(1).textContent()).toBe('item 10');
    const next = answerOf(page, '/api/v1/db/items');
    await page.getByRole('button', { name: 'Next page' }).click();
    expect(new URL((await next).url()).searchParams.get('offset')).toBe('25');
    await expect.poll(summary).toBe('Rows 26–50 of 143');
    expect(page.url()).toContain('page=2');
    await shot(page, 'data-filtered');
    await page.reload();
    await expect.poll(summary).toBe('Rows 26–50 of 143');
    expect(await page.getByLabel('Filter 1 value').inputValue()).toBe('3');
    w.expectClean();
  });

  it('edits a cell and a JSON cell: the change is in the database', async () => {
    await page.goto(`${s.url}/console/data/items?size=25`);
    await expect.poll(summary).toBe('Rows 1–25 of 1000');
    await grid().getByRole('button', { name: 'Edit name of id 5', exact: true }).click();
    const input = page.getByLabel('New value: name of id 5');
    await input.fill('renamed in the browser');
    const saved = answerOf(page, '/api/v1/db/items', 'PATCH');
    await input.press('Enter');
    const res = await saved;
    expect(res.status()).toBe(200);
    expect(new URL(res.url()).searchParams.get('eq.id')).toBe('5');
    await page.getByRole('status').filter({ hasText: 'Saved name of id 5.' }).waitFor();
    expect(await sql('select name from items where id = 5')).toEqual([{ name: 'renamed in the browser' }]);
    await expect.poll(() => grid().locator('tbody tr[aria-rowindex="6"] td').nth(1).textContent()).toBe('renamed in the browser');

    await grid().getByRole('button', { name: 'Edit meta of id 6', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit meta' });
    const json = dialog.getByLabel('meta of id 6 (JSON)');
    expect(await json.inputValue()).toBe('{\n  "n": 6,\n  "even": true\n}');
    await shot(page, 'data-edit-json');
    await json.fill('{"n": 6, "note": "checked"}');
    const savedJson = answerOf(page, '/api/v1/db/items', 'PATCH');
    await dialog.getByRole('button', { name: 'Save' }).click();
    expect((await savedJson).status()).toBe(200);
    expect(await sql('select meta from items where id = 6')).toEqual([{ meta: { n: 6, note: 'checked' } }]);
    w.expectClean();
  });

  it("shows the server's code and message when a write is refused", async () => {
    w.allow(400);
    await page.goto(`${s.url}/console/data/items?size=25`);
    await expect.poll(summary).toBe('Rows 1–25 of 1000');
    await grid().getByRole('button', { name: 'Edit qty of id 2', exact: true }).click();
    await page.getByLabel('New value: qty of id 2').fill('-1');
    const refused = answerOf(page, '/api/v1/db/items', 'PATCH');
    await page.getByRole('button', { name: 'Save' }).click();
    const res = await refused;
    expect(res.status()).toBe(400);
    const body = await res.json();
    expect(body.code).toBe('constraint_violation');
    const alert = page.getByRole('alert').filter({ hasText: 'The server refused' });
    await expect.poll(() => page.getByTestId('refusal-code').textContent()).toBe('constraint_violation');
    expect(await alert.textContent()).toContain(body.message);
    await shot(page, 'data-refused');
    expect(await sql('select qty from items where id = 2')).toEqual([{ qty: 2 }]);
    await page.getByRole('button', { name: 'Cancel' }).click();
    w.expectClean();
  });

  it('inserts a row, then deletes it after a confirmation', async () => {
    await page.goto(`${s.url}/console/data/items?size=25&order=[["id","desc"]]`);
    await expect.poll(summary).toBe('Rows 1–25 of 1000');
    await page.getByRole('button', { name: 'Insert row' }).click();
    const dialog = page.getByRole('dialog', { name: 'Insert a row into items' });
    await dialog.getByLabel(/^name/).fill('brand new');
    await dialog.getByLabel('meta (jsonb)').fill('{"made": "in the console"}');
    await dialog.getByLabel(/^tags/).fill('["x", "y,z"]');
    await shot(page, 'data-insert');
    const created = answerOf(page, '/api/v1/db/items', 'POST');
    await dialog.getByRole('button', { name: 'Insert' }).click();
    expect((await created).status()).toBe(201);
    await expect.poll(summary).toBe('Rows 1–25 of 1001');
    const [row] = await sql<{ id: number; qty: number; meta: unknown; tags: string[] }>(
      "select id, qty, meta, tags from items where name = 'brand new'",
    );
    expect(row).toMatchObject({ qty: 0, meta: { made: 'in the console' }, tags: ['x', 'y,z'] });
    await expect.poll(() => grid().locator('tbody tr[aria-rowindex="2"] td').nth(1).textContent()).toBe('brand new');

    await grid()
      .getByRole('button', { name: `Delete row id ${row.id}`, exact: true })
      .click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete this row?' });
    await confirm.waitFor();
    await shot(page, 'data-delete-confirm');
    const deleted = answerOf(page, '/api/v1/db/items', 'DELETE');
    await confirm.getByRole('button', { name: 'Delete row' }).click();
    expect((await deleted).status()).toBe(200);
    await expect.poll(summary).toBe('Rows 1–25 of 1000');
    expect(await sql(`select count(*)::int as n from items where id = ${row.id}`)).toEqual([{ n: 0 }]);
    w.expectClean();
  });

  it('shows a view read-only', async () => {
    await page.getByLabel('Table').selectOption('cheap');
    await expect.poll(summary).toBe('Rows 1–100 of 142');
    expect(await page.getByText('A view: rows are shown read-only here').count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Insert row' }).count()).toBe(0);
    w.expectClean();
  });
});
