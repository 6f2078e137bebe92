import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// Users in Chromium: found by a server-side search, its sessions shown, banned (its sign-in
// is then refused; ban.test.ts covers that enforcement end to end), signed
// out everywhere, created, and deleted after a confirmation.

let s: ConsoleServer;
let w: Watched;
let page: Page;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  s = await startConsole();
  for (const email of ['grace@example.com', 'alan@example.com', 'ada@example.com']) {
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: { ...s.t.as.anon, 'user-agent': 'Firefox/130 on a laptop' },
      payload: { email, password: PASSWORD },
    });
    expect(res.statusCode).toBe(200);
  }
  const context = await s.browser.newContext();
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

/** ada's sign-in with her right password: its status and code. */
async function adaSignsIn() {
  const res = await s.t.app.inject({
    method: 'POST',
    url: '/v1/auth/signin',
    headers: s.t.as.anon,
    payload: { email: 'ada@example.com', password: PASSWORD },
  });
  return { status: res.statusCode, code: JSON.parse(res.body).code as string | undefined };
}

describe('users', () => {
  it('finds a user by part of the email, shows identities and sessions, bans and signs it out everywhere', async () => {
    await page.goto(`${s.url}/console/users`);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'users' }).textContent()).toBe('1–3 of 3 users');
    const search = answerOf(page, '/api/v1/users');
    await page.getByLabel('Search users by email or phone').fill('ADA@');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    expect(new URL((await search).url()).searchParams.get('search')).toBe('ADA@');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'users' }).textContent()).toBe('1–1 of 1 users matching "ADA@"');
    expect(page.url()).toContain('q=ADA%40');
    await page.getByRole('button', { name: 'ada@example.com' }).click();
    const detail = page.getByRole('region', { name: 'ada@example.com' });
    await detail.getByText('Open sessions (1)').waitFor();
    expect(await detail.getByText('Firefox/130 on a laptop').count()).toBe(1);
    expect(await detail.getByRole('region', { name: 'Identities' }).textContent()).toContain('email · ada@example.com');
    await shot(page, 'users-detail');

    // Signed out first: a ban ends every session too (issue 19), which would leave the button nothing to do.
    const out = answerOf(page, '/signout', 'POST');
    await detail.getByRole('button', { name: 'Sign out everywhere' }).click();
    expect(await (await out).json()).toEqual({ revoked: 1 });
    await detail.getByText('Open sessions (0)').waitFor();

    const ban = answerOf(page, /\/api\/v1\/users\/[\w-]+$/, 'PATCH');
    await page.getByLabel('Ban for').selectOption('7 days');
    await detail.getByRole('button', { name: 'Ban user' }).click();
    const banned = await (await ban).json();
    expect(Date.parse(banned.banned_until) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    await detail.getByRole('status').filter({ hasText: 'Banned 7 days' }).waitFor();
    await expect.poll(() => detail.textContent()).toContain('Banned until');
    await shot(page, 'users-banned');
    // The ban is in force: her right password is refused.
    expect(await adaSignsIn()).toEqual({ status: 403, code: 'user_banned' });

    await detail.getByRole('button', { name: 'Lift the ban' }).click();
    await detail.getByRole('status').filter({ hasText: 'Ban lifted.' }).waitFor();
    expect(await adaSignsIn()).toEqual({ status: 200, code: undefined });
    w.expectClean();
  });

  it('creates a user, then deletes it after a confirmation', async () => {
    await page.goto(`${s.url}/console/users`);
    await page.getByRole('button', { name: 'Create user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create user' });
    await dialog.getByLabel('Email', { exact: true }).fill('new.person@example.com');
    await dialog.getByLabel('Password (optional)').fill('a password long enough');
    const created = answerOf(page, '/api/v1/users', 'POST');
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect((await created).status()).toBe(201);
    const detail = page.getByRole('region', { name: 'new.person@example.com' });
    await detail.waitFor();
    expect(await detail.textContent()).toContain('(confirmed)');
    // The new user can sign in with that password.
    const signin = await s.t.app.inject({
      method: 'POST',
      url: '/v1/auth/signin',
      headers: s.t.as.anon,
      payload: { email: 'new.person@example.com', password: 'a password long enough' },
    });
    expect(signin.statusCode).toBe(200);

    await detail.getByRole('button', { name: 'Delete user' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete this user?' });
    await confirm.waitFor();
    await shot(page, 'users-delete-confirm');
    const deleted = answerOf(page, /\/api\/v1\/users\/[\w-]+$/, 'DELETE');
    await confirm.getByRole('button', { name: 'Delete permanently' }).click();
    expect((await deleted).status()).toBe(200);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'users' }).textContent()).toBe('1–3 of 3 users');
    expect(await page.getByRole('button', { name: 'new.person@example.com' }).count()).toBe(0);
    await shot(page, 'users-list');
    w.expectClean();
  });
});
