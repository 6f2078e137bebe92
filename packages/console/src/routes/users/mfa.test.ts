import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../../server/src/auth/mfa/totp.js';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// Issue 27, console part: the auth settings' MFA and passkeys tab, the users list's MFA
// column, and a user's factors and passkeys with the admin reset, in Chromium.

let s: ConsoleServer;
let w: Watched;
let page: Page;
const PASSWORD = 'correct horse battery';
const EMAIL = 'mfa-user@example.com';
let userId: string;
let aal1: string;

const inject = (method: 'GET' | 'POST', url: string, payload?: object, token?: string) =>
  s.t.app.inject({ method, url, headers: token ? s.t.as.user(token) : s.t.as.anon, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  s = await startConsole();
  const up = (await inject('POST', '/v1/auth/signup', { email: EMAIL, password: PASSWORD })).json();
  userId = up.user.id;
  const token = up.session.access_token;
  const factor = (await inject('POST', '/v1/auth/factors', { factor_type: 'totp', friendly_name: 'Pixel' }, token)).json();
  const challenge = (await inject('POST', `/v1/auth/factors/${factor.id}/challenge`, {}, token)).json();
  const verified = await inject(
    'POST',
    `/v1/auth/factors/${factor.id}/verify`,
    { challenge_id: challenge.id, code: totpCode(factor.totp.secret, s.t.clock.now()) },
    token,
  );
  expect(verified.statusCode, verified.body).toBe(200);
  // A passkey row as registration stores it (real WebAuthn ceremonies: packages/sdk/test/e2e/passkeys-browser.test.ts).
  await s.t.db.query(
    `insert into auth.passkeys (user_id, credential_id, public_key, name, created_at) values ($1, 'cred-console-test', 'pk', 'YubiKey', now())`,
    [userId],
  );
  aal1 = (await inject('POST', '/v1/auth/signin', { email: EMAIL, password: PASSWORD })).json().access_token;
  const context = await s.browser.newContext();
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

describe('MFA and passkeys in the console', () => {
  it('the auth settings tab turns passkeys on with their origins and sets the enforcement', async () => {
    await page.goto(`${s.url}/console/auth?section=security`);
    await page.getByRole('switch', { name: 'Passkeys' }).click();
    await page.getByLabel('Other origins allowed to use passkeys (one per line)').fill('https://app.example.com');
    await page.getByLabel('Enforcement').selectOption('policies');
    const saved = answerOf(page, '/api/v1/settings/auth', 'PATCH');
    await page.getByRole('button', { name: 'Save settings' }).click();
    expect((await saved).status()).toBe(200);
    await page.getByText('Settings saved.').waitFor();
    expect(s.t.settings.auth()).toMatchObject({
      passkey_enabled: true,
      passkey_origins: ['https://app.example.com'],
      mfa_enforcement: 'policies',
    });
    await shot(page, 'auth-mfa-passkeys');
    // A bad origin is refused at its field and nothing is saved.
    w.allow(400);
    await page.getByLabel('Other origins allowed to use passkeys (one per line)').fill('http://evil.example.com/path');
    await page.getByLabel('Enforcement').selectOption('server');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Nothing was saved').waitFor();
    expect(s.t.settings.auth().mfa_enforcement).toBe('policies');
    await page.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByLabel('Enforcement').selectOption('server');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => s.t.settings.auth().mfa_enforcement).toBe('server');
  });

  it('the users list marks MFA users; a user’s page shows factors and passkeys, and an admin reset downgrades at once', async () => {
    expect((await inject('GET', '/api/v1/db/notes', undefined, aal1)).json().code).toBe('mfa_required');
    await page.goto(`${s.url}/console/users`);
    const row = page.getByRole('row').filter({ hasText: EMAIL });
    await expect.poll(() => row.getByTestId('mfa').textContent()).toBe('TOTP · 1 passkey');
    await row.getByRole('button', { name: EMAIL }).click();
    const section = page.getByRole('region', { name: 'Second factors and passkeys' });
    await section.getByText('Authenticator app “Pixel” · verified').waitFor();
    await section.getByText('Passkey “YubiKey”').waitFor();
    await shot(page, 'users-mfa');

    await section.getByRole('button', { name: 'Reset second factors' }).click();
    const reset = answerOf(page, `/api/v1/users/${userId}/factors`, 'DELETE');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Reset second factors' }).click();
    expect((await reset).status()).toBe(200);
    await page.getByText('Second factors reset: 1 removed.').waitFor();
    // The password-only session reads at once (no table: 404 table_not_found, not 403 mfa_required).
    expect((await inject('GET', '/api/v1/db/notes', undefined, aal1)).json().code).toBe('table_not_found');

    await section.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('Passkey “YubiKey” removed: it signs no one in any more.').waitFor();
    await section.getByText('None: a password').waitFor();
    await expect.poll(() => row.getByTestId('mfa').textContent()).toBe('—');
    await shot(page, 'users-mfa-reset');
    w.expectClean();
  });
});
