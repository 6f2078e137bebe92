import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleServer, openPage, shot, signIn, startConsole } from '../../../test/browser.js';

// The overview in Chromium: the project URL and the public key it shows are what the SDK's
// createClient takes, so pasting them into an app reaches the project's tables.

let s: ConsoleServer;
beforeAll(async () => {
  s = await startConsole();
  const made = await s.t.sql(`create table notes (id int primary key, body text not null);
    alter table notes enable row level security;
    create policy notes_read on notes for select to anon using (true);
    insert into notes values (1, 'hello from the overview');`);
  expect(made.statusCode, made.body).toBe(200);
});
afterAll(async () => {
  await s?.stop();
});

it('shows the project URL and public key that createClient takes, and they reach a table', async () => {
  const context = await s.browser.newContext();
  try {
    const w = await openPage(context);
    await signIn(w, s.url);
    const { page } = w;
    const projectUrl = (await page.getByTestId('project-url').textContent()) ?? '';
    const publicKey = (await page.getByTestId('public-key').textContent()) ?? '';
    expect(projectUrl).toBe(s.url);
    expect(publicKey).toMatch(/^pk_/);
    await shot(page, 'overview');
    // The Pages card links every other page of the top bar.
    const nav = await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link').allTextContents();
    const listed = await page.getByRole('region', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(listed.sort()).toEqual(nav.filter((n) => n !== 'Overview').sort());

    // What an app would do with the two values: the SDK the server serves, in a browser page.
    // (A string, so that vitest does not rewrite the import() meant for the browser.)
    const rows = await page.evaluate(`(async () => {
      const { createClient } = await import(${JSON.stringify(`${projectUrl}/sdk/plinth.js`)});
      const { data, error } = await createClient(${JSON.stringify(projectUrl)}, ${JSON.stringify(publicKey)}).from('notes').select('id,body');
      return error ?? data;
    })()`);
    expect(rows).toEqual([{ id: 1, body: 'hello from the overview' }]);
    w.expectClean();
  } finally {
    await context.close();
  }
});
