import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, openPage, shot, signIn, startConsole } from '../../test/browser.js';

// A viewer in Chromium (issue 19: admin roles, "viewer (read-only pages)"): every older page
// still shows the project (tables, buckets and files, users, auth settings, webhooks) but no
// control the server would refuse to the role: none to add, edit or delete, Save absent and the
// settings' fields disabled, the SQL runner a notice, and the API explorer saying what a write
// sent by a viewer is. An owner on the same project still has each control.

const VIEWER = { email: 'viewer@example.com', password: 'a long viewer passphrase' };

let s: ConsoleServer;
beforeAll(async () => {
  s = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const made = await s.t.sql(`create table notes (id int primary key, body text not null);
    alter table notes enable row level security;
    create policy notes_read on notes for select to anon using (true);
    create policy notes_write on notes for insert to anon with check (true);
    insert into notes values (1, 'read by a viewer');`);
  expect(made.statusCode, made.body).toBe(200);
  const as = (method: 'POST', url: string, payload: unknown, headers: Record<string, string> = {}) =>
    s.t.app.inject({ method, url, headers: { ...s.t.as.service, ...headers }, payload: payload as string });
  const user = await as('POST', '/api/v1/users', { email: 'reader@example.com', password: 'a long user password' });
  expect(user.statusCode, user.body).toBe(201);
  const bucket = await as('POST', '/api/v1/storage/buckets', { name: 'docs' });
  expect(bucket.statusCode, bucket.body).toBe(201);
  const file = await as('POST', '/api/v1/storage/object/docs/readme.txt', 'hello', { 'content-type': 'text/plain' });
  expect(file.statusCode, file.body).toBe(201);
  const hook = await as('POST', '/api/v1/webhooks', { name: 'notes-hook', table: 'notes', url: 'http://127.0.0.1:9/in', enabled: false });
  expect(hook.statusCode, hook.body).toBe(201);
  const invite = await as('POST', '/api/v1/admin/invites', { email: VIEWER.email, role: 'viewer' });
  expect(invite.statusCode, invite.body).toBe(201);
  const token = new URL(invite.json().link).searchParams.get('token');
  const accepted = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/invites/accept',
    payload: { token, password: VIEWER.password },
  });
  expect(accepted.statusCode, accepted.body).toBe(200);
});
afterAll(async () => {
  await s?.stop();
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
/** Waits for the page's own heading (every page has one), so an absent control is absent, not yet to come. */
const visit = async (page: Page, path: string, heading: string, exact = false) => {
  await page.goto(`${s.url}/console${path}`);
  await page.getByRole('heading', { name: heading, exact }).first().waitFor();
};

describe('a viewer', () => {
  it('reads every older page without a control the server would refuse', async () => {
    const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      const w = await openPage(context);
      // The console reads the overview's storage size and a table's columns and policies through
      // the SQL runner, which the server refuses to a viewer (403 forbidden, "may not run SQL"):
      // those answers are expected here.
      w.allow(403);
      await signIn(w, s.url, VIEWER);
      const { page } = w;

      // Table browser: the tables, no New table; a table's rows tab without Insert row.
      await visit(page, '/data', 'Table browser');
      await page.getByRole('link', { name: 'notes' }).waitFor();
      expect(await button(page, 'New table').count()).toBe(0);
      await shot(page, 'viewer-tables');
      await visit(page, '/data/notes', 'Table browser');
      await page.getByRole('tab', { name: 'Rows' }).waitFor();
      // Rows come through the console's cookie (a viewer has no secret key), read only.
      await page.getByText('read by a viewer').first().waitFor();
      expect(await button(page, 'Insert row').count()).toBe(0);
      // The table editor and the policy editor read through the SQL runner, which the server
      // refuses to a viewer: its reason shows, and none of their change buttons.
      await visit(page, '/data/notes?view=structure', 'Table browser');
      await page.getByText('may not run SQL').first().waitFor();
      for (const name of ['New column', 'Drop table…']) expect(await button(page, name).count()).toBe(0);
      await visit(page, '/data/notes?view=policies', 'Table browser');
      await page.getByText('may not run SQL').first().waitFor();
      expect(await button(page, 'New policy').count()).toBe(0);

      // Storage: the bucket and its file, downloadable; nothing to create, upload or delete.
      await visit(page, '/storage', 'Storage');
      await page.getByRole('link', { name: 'docs' }).waitFor();
      expect(await button(page, 'New bucket').count()).toBe(0);
      expect(await button(page, 'Delete bucket docs').count()).toBe(0);
      await visit(page, '/storage/docs', 'docs');
      await page.getByText('readme.txt').first().click();
      await page.getByLabel('Object details').waitFor();
      expect(await button(page, 'Download').count()).toBe(1); // fetched with the header, saved from a blob (R12)
      for (const name of ['Upload files', 'New folder', 'Bucket settings', 'Delete']) expect(await button(page, name).count()).toBe(0);
      expect(await button(page, 'Copy signed URL').isDisabled()).toBe(true);
      expect(await button(page, 'Policies').count()).toBe(1);
      expect(await page.getByText('Drop files here').count()).toBe(0);
      await shot(page, 'viewer-storage');

      // Users: the user and their detail; no create, ban, sign-out or delete.
      await visit(page, '/users', 'Users');
      await page.getByText('reader@example.com').first().click();
      await button(page, 'Close the user').waitFor();
      for (const name of ['Create user', 'Confirm email', 'Ban user', 'Sign out everywhere', 'Delete user'])
        expect(await button(page, name).count()).toBe(0);
      await shot(page, 'viewer-users');

      // Auth settings: shown as they are, no Save, each switch and field disabled.
      await visit(page, '/auth', 'Auth settings');
      const switches = page.getByRole('switch');
      await switches.first().waitFor();
      expect(await switches.count()).toBeGreaterThan(0);
      for (const sw of await switches.all()) expect(await sw.isDisabled()).toBe(true);
      for (const name of ['Save settings', 'Discard changes']) expect(await button(page, name).count()).toBe(0);
      await shot(page, 'viewer-auth');
      await visit(page, '/auth?section=urls', 'Auth settings');
      const site = page.getByRole('textbox').first();
      await site.waitFor();
      expect(await site.isDisabled()).toBe(true);
      await visit(page, '/auth?section=delivery', 'Auth settings');
      expect(await button(page, 'Send test email').isDisabled()).toBe(true);

      // Webhooks: the webhook and its settings; no create, edit, rotate or delete; its switch disabled.
      await visit(page, '/webhooks', 'Webhooks');
      await page.getByRole('heading', { name: 'notes-hook' }).waitFor();
      for (const name of ['Create webhook', 'Edit', 'Rotate secret', 'Delete']) expect(await button(page, name).count()).toBe(0);
      expect(await page.getByRole('switch').isDisabled()).toBe(true);

      // SQL runner: a notice instead of the editor and its Run.
      await visit(page, '/sql', 'SQL runner');
      await page.getByText('Not available for your role').waitFor();
      expect(await button(page, 'Run').count()).toBe(0);
      expect(await page.locator('.cm-editor').count()).toBe(0);
      await shot(page, 'viewer-sql');

      // API explorer: reads as before; a write says whose it is, beside Send.
      await visit(page, '/api/notes?op=create', 'API', true);
      await button(page, 'Send request').waitFor();
      expect(await page.getByTestId('viewer-write-note').textContent()).toContain('goes out as the caller chosen above, not as you');
      await shot(page, 'viewer-api-write');
      await visit(page, '/api/notes?op=list', 'API', true);
      await button(page, 'Send request').waitFor();
      expect(await page.getByTestId('viewer-write-note').count()).toBe(0);
      w.expectClean();
    } finally {
      await context.close();
    }
  });
});

describe('an owner', () => {
  it('still has each of those controls', async () => {
    const context = await s.browser.newContext();
    try {
      const w = await openPage(context);
      await signIn(w, s.url);
      const { page } = w;
      await visit(page, '/data', 'Table browser');
      await button(page, 'New table').waitFor();
      await visit(page, '/data/notes', 'Table browser');
      await button(page, 'Insert row').waitFor();
      await visit(page, '/data/notes?view=structure', 'Table browser');
      await button(page, 'New column').waitFor();
      await visit(page, '/storage', 'Storage');
      await button(page, 'New bucket').waitFor();
      await visit(page, '/storage/docs', 'docs');
      await button(page, 'Upload files').waitFor();
      await visit(page, '/users', 'Users');
      await button(page, 'Create user').waitFor();
      await visit(page, '/auth', 'Auth settings');
      await button(page, 'Save settings').waitFor();
      expect(await page.getByRole('switch').first().isDisabled()).toBe(false);
      await visit(page, '/webhooks', 'Webhooks');
      await button(page, 'Rotate secret').waitFor();
      await visit(page, '/sql', 'SQL runner');
      await button(page, 'Run').waitFor();
      await visit(page, '/api/notes?op=create', 'API', true);
      await button(page, 'Send request').waitFor();
      expect(await page.getByTestId('viewer-write-note').count()).toBe(0);
      w.expectClean();
    } finally {
      await context.close();
    }
  });
});
