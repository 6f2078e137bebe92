import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The team in Chromium (issue 19): an owner invites a developer by a one-time link, the invited
// admin sets a password through it and lands signed in with that role (no Team, Audit log or
// signing key for them), the link then refused; roles changed, the last owner kept (the
// server's last_owner shown), an admin removed, an invitation withdrawn; the audit log paged;
// the signing key rotated, then rotated with the old key revoked after typing the word.

let s: ConsoleServer;
let w: Watched;
let page: Page;
const DEV = { email: 'dev@example.com', password: 'a developer passphrase' };

beforeAll(async () => {
  s = await startConsole();
  expect((await s.t.sql('create table notes (id int primary key, body text)')).statusCode).toBe(200);
  w = await openPage(await s.browser.newContext());
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

/** The JWKS's key ids, as an app verifying tokens reads them. */
async function jwksKids(): Promise<string[]> {
  const res = await s.t.app.inject({ method: 'GET', url: '/v1/auth/.well-known/jwks.json' });
  return (JSON.parse(res.body).keys as Array<{ kid: string }>).map((k) => k.kid);
}

describe('team', () => {
  it('invites a developer; the link signs them in as a developer once; roles, the last owner, removal, withdrawal', async () => {
    await page.goto(`${s.url}/console/team`);
    const admins = page.getByRole('list', { name: 'Admins' });
    await admins.getByText(ADMIN.email).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Admin' }).count()).toBe(1);
    // Admin is three pages, with tabs.
    const tabs = page.getByRole('navigation', { name: 'Project administration' });
    expect(await tabs.getByRole('link').allTextContents()).toEqual(['Team', 'Audit log', 'Backups']);

    await page.getByLabel('Email to invite').fill(DEV.email);
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    const made = answerOf(page, '/api/v1/admin/invites', 'POST');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    expect((await made).status()).toBe(201);
    const link = (await page.getByTestId('invite-link').textContent()) ?? '';
    expect(link).toMatch(new RegExp(`^${s.url}/console/invite\\?token=[\\w-]{20,}$`));
    const pending = page.getByRole('list', { name: 'Pending invitations' });
    await pending.getByText(DEV.email).waitFor();
    expect(await pending.textContent()).toContain(`by ${ADMIN.email}`);
    await shot(page, 'team-invited', { phone: true });
    // Shown once: the list the server answers has no link, so a reload shows none.
    await page.reload();
    await pending.getByText(DEV.email).waitFor();
    expect(await page.getByTestId('invite-link').count()).toBe(0);

    // The invited developer, in another browser.
    const other = await s.browser.newContext();
    const d = await openPage(other);
    await d.page.goto(link);
    await d.page.getByRole('heading', { name: 'Join the project' }).waitFor();
    await shot(d.page, 'invite-form', { phone: true });
    await d.page.getByLabel('Password', { exact: true }).fill(DEV.password);
    await d.page.getByLabel('Repeat the password').fill(DEV.password);
    const accepted = answerOf(d.page, '/api/v1/admin/invites/accept', 'POST');
    await d.page.getByRole('button', { name: 'Set password and sign in' }).click();
    expect((await accepted).status()).toBe(200);
    await d.page.getByRole('heading', { name: 'Overview' }).waitFor();
    const nav = d.page.getByRole('navigation', { name: 'Console pages' });
    await nav.getByRole('link', { name: 'Users' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    expect(await d.page.getByRole('button', { name: 'Rotate signing key' }).count()).toBe(0);
    await d.page.getByTestId('secret-key-unavailable').waitFor();
    await d.page.goto(`${s.url}/console/team`);
    await d.page.getByText('Only an owner or admin of the project sees and manages its console admins. You are a developer.').waitFor();
    d.expectClean();

    // The link a second time (another browser): refused, said so.
    const third = await s.browser.newContext();
    const t = await openPage(third);
    t.allow(400);
    await t.page.goto(link);
    await t.page.getByLabel('Password', { exact: true }).fill('another passphrase!');
    await t.page.getByLabel('Repeat the password').fill('another passphrase!');
    const again = answerOf(t.page, '/api/v1/admin/invites/accept', 'POST');
    await t.page.getByRole('button', { name: 'Set password and sign in' }).click();
    expect((await again).status()).toBe(400);
    await t.page.getByRole('alert').filter({ hasText: 'This invitation link no longer works' }).waitFor();
    await shot(t.page, 'invite-used', { phone: true });
    t.expectClean();
    await third.close();

    // The owner sees the developer, makes them a viewer.
    await page.reload();
    await admins.getByText(DEV.email).waitFor();
    await page.getByText('No pending invitation.').waitFor();
    const role = answerOf(page, /\/api\/v1\/admin\/admins\/[\w-]+$/, 'PATCH');
    await page.getByLabel(`Role of ${DEV.email}`).selectOption('viewer');
    expect((await role).status()).toBe(200);
    await page
      .getByRole('status')
      .filter({ hasText: `${DEV.email} is now a viewer.` })
      .waitFor();
    // The viewer's console follows at its next load: still no team, and no rotate.
    await d.page.goto(`${s.url}/console/`);
    await d.page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    expect(await d.page.getByRole('button', { name: 'Rotate signing key' }).count()).toBe(0);
    await d.page.getByText('You are a viewer of this project').waitFor();
    // A viewer's realtime switch is there to read, not to switch.
    await d.page.goto(`${s.url}/console/data/notes?view=realtime`);
    const capture = d.page.getByRole('switch', { name: 'Push the changes of notes to clients' });
    await capture.waitFor();
    expect(await capture.isDisabled()).toBe(true);
    await shot(d.page, 'viewer-realtime');

    // The last owner stays: demoting oneself is refused with the server's own words.
    w.allow(409);
    const refused = answerOf(page, /\/api\/v1\/admin\/admins\/[\w-]+$/, 'PATCH');
    await page.getByLabel(`Role of ${ADMIN.email}`).selectOption('admin');
    expect((await refused).status()).toBe(409);
    const alert = page.getByRole('alert').filter({ hasText: 'This is the last owner' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('code: last_owner');
    await shot(page, 'team-last-owner');
    expect(await s.t.app.inject({ method: 'GET', url: '/api/v1/admin/admins', headers: s.t.as.service }).then((r) => r.json())).toEqual(
      expect.arrayContaining([expect.objectContaining({ email: ADMIN.email, role: 'owner' })]),
    );

    // Removal, after a confirmation: the viewer's session ends with them.
    await page.getByRole('button', { name: `Remove ${DEV.email}` }).click();
    const removed = answerOf(page, /\/api\/v1\/admin\/admins\/[\w-]+$/, 'DELETE');
    await page.getByRole('alertdialog', { name: 'Remove this admin?' }).getByRole('button', { name: 'Remove admin' }).click();
    expect((await removed).status()).toBe(200);
    await page
      .getByRole('status')
      .filter({ hasText: `${DEV.email} was removed` })
      .waitFor();
    // The list is read again after the answer: polled, not read once.
    await expect.poll(() => admins.getByText(DEV.email).count()).toBe(0);
    d.allow(401);
    await d.page.goto(`${s.url}/console/users`);
    await d.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await other.close();

    // A withdrawn invitation: its link stops working.
    await page.getByLabel('Email to invite').fill('late@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const lateLink = (await page.getByTestId('invite-link').textContent()) ?? '';
    const withdrawn = answerOf(page, /\/api\/v1\/admin\/invites\/[\w-]+$/, 'DELETE');
    await page.getByRole('button', { name: 'Withdraw the invitation of late@example.com' }).click();
    expect((await withdrawn).status()).toBe(200);
    await page.getByRole('status').filter({ hasText: 'its link no longer works' }).waitFor();
    await expect.poll(() => page.getByTestId('invite-link').count()).toBe(0);
    const token = new URL(lateLink).searchParams.get('token');
    const late = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites/accept',
      headers: { origin: s.url },
      payload: { token, password: 'a late passphrase' },
    });
    expect(late.json().code).toBe('invite_invalid');
    await shot(page, 'team', { phone: true });
    w.expectClean();
  });

  it('pages the audit log, newest first', async () => {
    // 60 more actions by the secret key: with the test's own, more than one page of 50.
    for (let i = 0; i < 60; i++) {
      const res = await s.t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: s.t.as.service, payload: { query: `select ${i}` } });
      expect(res.statusCode).toBe(200);
    }
    await page.goto(`${s.url}/console/audit`);
    const status = page.getByRole('status').filter({ hasText: 'entries' });
    await expect.poll(() => status.textContent()).toMatch(/^1–50 of (\d+) entries$/);
    const total = Number(/of (\d+)/.exec((await status.textContent()) ?? '')?.[1]);
    expect(total).toBeGreaterThan(60);
    const log = page.getByRole('list', { name: 'Audit log' });
    const firstRow = log.getByRole('listitem').first();
    expect(await firstRow.textContent()).toContain('select 59');
    expect(await firstRow.textContent()).toContain('secret key');
    await shot(page, 'audit', { phone: true });
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(() => status.textContent()).toBe(`51–${Math.min(100, total)} of ${total} entries`);
    expect(page.url()).toContain('page=2');
    // The first page's oldest actions of this test: the invitation, its acceptance, the role change.
    const older = (await log.textContent()) ?? '';
    for (const action of ['admin.invite', 'admin.invite.accept', 'admin.role', 'admin.remove', 'admin.invite.revoke']) {
      expect(older).toContain(action);
    }
    w.expectClean();
  });

  it('rotates the signing key, then revokes the old one only after the word is typed', async () => {
    const before = await jwksKids();
    await page.goto(`${s.url}/console/`);
    await page.getByRole('button', { name: 'Rotate signing key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing key?' });
    const rotated = answerOf(page, '/api/v1/admin/signing-keys/rotate', 'POST');
    await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
    const first = await (await rotated).json();
    expect(first.revoked).toBe(false);
    await expect.poll(() => page.getByTestId('new-kid').textContent()).toBe(first.kid);
    // The new key and the old one are both in the JWKS.
    expect(await jwksKids()).toEqual(expect.arrayContaining([first.kid, ...before]));

    await page.getByRole('button', { name: 'Rotate signing key' }).click();
    await dialog.getByLabel('Also revoke the old key at once').check();
    const revoking = dialog.getByRole('button', { name: 'Rotate and revoke the old key' });
    expect(await revoking.isDisabled()).toBe(true);
    await dialog.getByLabel('Type revoke to confirm').fill('revok');
    expect(await revoking.isDisabled()).toBe(true);
    await shot(page, 'rotate-revoke-confirm', { phone: true });
    await dialog.getByLabel('Type revoke to confirm').fill('revoke');
    const revoked = answerOf(page, '/api/v1/admin/signing-keys/rotate', 'POST');
    await revoking.click();
    const second = await (await revoked).json();
    expect(second.revoked).toBe(true);
    await page.getByRole('status').filter({ hasText: 'The previous key is gone' }).waitFor();
    expect(await jwksKids()).toEqual([second.kid]);
    await shot(page, 'overview-rotated');
    w.expectClean();
  });
});
