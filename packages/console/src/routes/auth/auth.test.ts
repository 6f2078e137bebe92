import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, APP, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// Auth settings in Chromium: a setting the server refuses (its message at the field, nothing
// saved), one it accepts, the "Does this URL pass?" tester, the phone switch on the free plan,
// a provider with its callback URL and Apple's .p8 upload, a template preview, and the SMTP
// server's own answer to a test email (this server sends through the harness's SMTP sink).

let s: ConsoleServer;
let w: Watched;
let page: Page;
beforeAll(async () => {
  s = await startConsole({ smtp: true });
  const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
  await page.getByRole('link', { name: 'Auth settings' }).first().click();
  await page.getByRole('heading', { name: 'Auth settings' }).waitFor();
});
afterAll(async () => {
  await s?.stop();
});

const section = (name: string) => page.getByRole('tab', { name }).click();
async function save() {
  const answer = answerOf(page, '/api/v1/settings/auth', 'PATCH');
  await page.getByRole('button', { name: 'Save settings' }).click();
  return answer;
}

/** Whether a preflight from `origin` gets CORS headers (what a browser needs to call the API). */
async function corsAllowed(origin: string): Promise<boolean> {
  const res = await s.t.app.inject({
    method: 'OPTIONS',
    url: '/api/v1/db/anything',
    headers: { origin, 'access-control-request-method': 'GET' },
  });
  return res.headers['access-control-allow-origin'] === origin;
}

describe('auth settings', () => {
  it("shows the server's refusal at its field and saves nothing; then saves an accepted change", async () => {
    w.allow(400);
    await section('URLs');
    // The site URL is shown with what it is and where it is set.
    expect(await page.getByTestId('site-url').textContent()).toBe(s.url);
    expect(await page.getByTestId('site-url-note').textContent()).toContain('PUBLIC_URL');
    const cors = page.getByLabel('CORS origins (one per line)');
    await cors.fill('https://*.example.com');
    expect((await save()).status()).toBe(400);
    await expect
      .poll(() => page.getByText('Line 1: wildcards are allowed only as the port of localhost, 127.0.0.1 or [::1]').count())
      .toBe(1);
    expect(await cors.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').filter({ hasText: 'Nothing was saved' }).count()).toBe(1);
    await shot(page, 'auth-refused');
    expect(s.t.settings.auth().cors_origins).toEqual([]);

    // Typed as a person types: Enter at the end of a line starts the next one.
    await cors.fill('http://localhost:*');
    await cors.press('End');
    await cors.press('Enter');
    await cors.pressSequentially('https://app.example.com');
    expect(await cors.inputValue()).toBe('http://localhost:*\nhttps://app.example.com');
    await section('Methods');
    await page.getByLabel('Minimum password length').fill('12');
    await page.getByRole('switch', { name: 'Magic links' }).click();
    // Magic links need their page: the server refuses the save, at that field. Its answer is
    // awaited, so that the next save's answer is not taken for it.
    expect((await save()).status()).toBe(400);
    await page.getByRole('alert').filter({ hasText: 'is required when magic_link_enabled is on' }).waitFor();
    await section('URLs');
    await page.getByLabel('Magic link page').fill(`${APP}/magic`);
    const ok = await save();
    expect(ok.status()).toBe(200);
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    await shot(page, 'auth-saved');
    // The localhost switch (issue 25): on by default, explained for this loopback PUBLIC_URL.
    const localhost = page.getByRole('switch', { name: 'Allow pages on localhost, any port, while developing' });
    expect(await localhost.isChecked()).toBe(true);
    expect(await page.getByTestId('cors-localhost-note').textContent()).toContain('is a loopback address, so this counts');
    // 127.0.0.1:5173 is in no list entry (localhost:* is): only the switch lets it in.
    expect(await corsAllowed('http://127.0.0.1:5173')).toBe(true);
    await localhost.click();
    expect(await page.getByTestId('cors-localhost-note').textContent()).toContain('a dev server on another port must be listed');
    await shot(page, 'auth-cors-localhost-off', { phone: true });
    expect((await save()).status()).toBe(200);
    expect(s.t.settings.auth().cors_allow_localhost).toBe(false);
    // What the switch does: a page on another local port is refused now (the listed localhost:* aside).
    expect(await corsAllowed('http://127.0.0.1:5173')).toBe(false);
    expect(s.t.settings.auth()).toMatchObject({
      min_password_length: 12,
      magic_link_enabled: true,
      magic_link_url: `${APP}/magic`,
      cors_origins: ['http://localhost:*', 'https://app.example.com'],
    });
    w.expectClean();
  });

  it('blocks an email page that the redirect list does not allow, before asking the server', async () => {
    await section('URLs');
    let patched = 0;
    const count = () => patched++;
    page.on('request', (r) => r.method() === 'PATCH' && count());
    await page.getByLabel('Password reset page').fill('https://elsewhere.example.com/reset');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByText('is not allowed by the redirect URLs above').count()).toBeGreaterThan(0);
    expect(patched).toBe(0);
    await page.getByLabel('Password reset page').fill('');
    w.expectClean();
  });

  it("tests URLs against the redirect list with the server's own matcher", async () => {
    await section('URLs');
    const tester = page.getByLabel('Does this URL pass?');
    const verdict = page.getByRole('status').filter({ hasText: /allowed/i });
    await tester.fill(`${APP}/auth/callback?next=/home#x`);
    await expect.poll(() => verdict.textContent()).toBe(`Allowed: it matches ${APP}.`);
    await tester.fill('https://app.example.com.evil.com/auth');
    await expect.poll(() => verdict.textContent()).toMatch(/^Not allowed/);
    await tester.fill('javascript:alert(1)');
    await expect.poll(() => verdict.textContent()).toBe('Not allowed: javascript: URLs are not allowed.');
    await tester.fill(`${APP}/auth`);
    await shot(page, 'auth-url-tester');
    w.expectClean();
  });

  it('disables the phone switch on the free plan and says why', async () => {
    await section('Methods');
    const phone = page.getByRole('switch', { name: 'Phone (SMS codes)' });
    expect(await phone.isDisabled()).toBe(true);
    expect(await page.getByText('Phone sign-in needs a paid plan (Pro or above); this project is on Free.').count()).toBe(1);
    await shot(page, 'auth-methods');
    w.expectClean();
  });

  it('configures a provider (callback URL to copy, secret write-only) and Apple with its .p8 file', async () => {
    await section('Social providers');
    await page.getByRole('button', { name: 'Copy the github callback URL' }).click();
    // The copy finishes after the click (the clipboard write is asynchronous).
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(`${s.url}/v1/auth/oauth/github/callback`);
    await page.getByLabel('GitHub client ID').fill('Iv1.abc');
    await page.getByLabel('GitHub client secret').fill('gh-secret-value');
    await page.getByRole('switch', { name: 'Enable GitHub' }).click();

    const dir = mkdtempSync(join(tmpdir(), 'p8-'));
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeFileSync(join(dir, 'AuthKey_ABC123.p8'), pem);
    await page.getByLabel('Apple services ID').fill('com.example.web');
    await page.getByLabel('Apple team ID').fill('TEAM123456');
    await page.getByLabel('Apple key ID').fill('ABC123');
    await page.getByLabel('Apple private key (.p8 file)').setInputFiles(join(dir, 'AuthKey_ABC123.p8'));
    await page.getByText('Key read from the file; save to store it.').waitFor();
    await page.getByRole('switch', { name: 'Enable Apple' }).click();
    const res = await save();
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(body.providers.github).toEqual({ enabled: true, client_id: 'Iv1.abc', client_secret: '********' });
    expect(body.providers.apple.private_key).toBe('********');
    expect(s.t.settings.auth().providers.github.client_secret).toBe('gh-secret-value');
    expect(s.t.settings.auth().providers.apple.private_key).toBe(pem.trim());
    // Write-only: the stored secret is never shown, an empty field keeps it. The form takes the
    // saved settings a moment after the answer: first the field says a secret is stored.
    await expect.poll(() => page.getByLabel('GitHub client secret').getAttribute('placeholder')).toBe('Stored — type to replace');
    expect(await page.getByLabel('GitHub client secret').inputValue()).toBe('');
    await page.getByLabel('GitHub client ID').fill('Iv1.def');
    expect((await save()).status()).toBe(200);
    expect(s.t.settings.auth().providers.github).toMatchObject({ client_id: 'Iv1.def', client_secret: 'gh-secret-value' });
    await shot(page, 'auth-providers');
    w.expectClean();
  });

  it('previews an email template with the server renderer, and shows the SMTP answer to a test email', async () => {
    await section('Email templates');
    await page.getByLabel('Template', { exact: true }).selectOption('magic_link');
    // The fields start from the built-in text, which an edit changes and Reset puts back.
    const subject = page.getByLabel('Subject', { exact: true });
    await expect.poll(() => subject.inputValue()).toBe('Your {{project}} sign-in link');
    expect(await page.getByLabel('Text body').inputValue()).toContain('{{link}}');
    await subject.fill('Your link to {{project}}');
    await page.getByTestId('template-state').filter({ hasText: 'Changed from the default' }).waitFor();
    await page.getByRole('button', { name: 'Reset to the default' }).click();
    expect(await subject.inputValue()).toBe('Your {{project}} sign-in link');
    await page.getByTestId('template-state').filter({ hasText: 'The default text' }).waitFor();
    await subject.fill('Your link to {{project}}');
    const preview = answerOf(page, '/api/v1/email/preview', 'POST');
    await page.getByRole('button', { name: 'Preview' }).click();
    expect((await preview).status()).toBe(200);
    await page.getByText('Your link to Plinth project').waitFor();
    const frame = page.frameLocator('iframe[title="HTML preview"]');
    expect(await frame.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe(
      'https://app.example.com/page?token=preview-token',
    );
    await shot(page, 'auth-template-preview');

    await section('Email delivery');
    await page.getByLabel('Send a test email to').fill('owner@example.com');
    const sent = answerOf(page, '/api/v1/email/test', 'POST');
    await page.getByRole('button', { name: 'Send test email' }).click();
    expect((await sent).status()).toBe(200);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Sent to owner@example.com' }).textContent())
      .toMatch(/The SMTP server answered: 250/);
    expect(s.t.mail?.received.some((m) => m.to.includes('owner@example.com'))).toBe(true);
    await shot(page, 'auth-test-email');
    w.expectClean();
  });

  it("shows the keys plinth.json manages with the file's name, refuses a change of one before saving, and saves the others", async () => {
    // As a start with plinth.json `auth: {min_password_length: 12}` does (cli/project-apply.ts).
    await s.t.settings.applyManaged({ min_password_length: 12 }, '/app/plinth.json');
    await page.reload();
    await page.getByRole('heading', { name: 'Auth settings' }).waitFor();
    await section('Methods');
    await page.getByText('Kept in /app/plinth.json').waitFor();
    expect(await page.getByTestId('managed-keys').textContent()).toBe('min_password_length');
    await shot(page, 'auth-managed');
    const patches: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH' && r.url().endsWith('/api/v1/settings/auth')) patches.push(r.postData() ?? '');
    });
    await page.getByLabel('Minimum password length').fill('10');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('is kept in /app/plinth.json: change it there').first().waitFor();
    expect(patches).toEqual([]);
    expect(s.t.settings.auth().min_password_length).toBe(12);
    // Put back, another setting saves: the PATCH does not name the managed key (the server would refuse it).
    await page.getByLabel('Minimum password length').fill('12');
    await page.getByLabel('Session duration (seconds)').fill('7300');
    expect((await save()).status()).toBe(200);
    expect(patches).toHaveLength(1);
    expect(JSON.parse(patches[0])).not.toHaveProperty('min_password_length');
    expect(s.t.settings.auth().session_duration_seconds).toBe(7300);
    w.expectClean();
  });
});
