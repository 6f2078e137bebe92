import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OidcIdp, startOidcIdp } from '../../../../server/test/oidc-provider.js';
import { freePort } from '../../../../server/test/process.js';
import { answerOf, APP, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The OpenID Connect tab in Chromium, against a real OpenID Provider (npm oidc-provider, set up
// as a Keycloak realm's client would be: confidential, client_secret_basic, code flow with PKCE):
// an admin adds it (a refusal the console makes itself, the server's unreachable and issuer
// mismatch refusals at the issuer field), tests it (the test sign-in completes at the provider in
// a new tab and lands on the result page, which names the claims missing while the scopes lack
// email), fixes the scopes and tests again, and an end user of an app signs in with it through
// the SDK; then a refused test, an edit and a removal.

interface Outcome {
  user: { email: string | null; identities: Array<{ provider: string }> } | null;
  error: { code: string } | null;
  session: boolean;
}

let s: ConsoleServer;
let kc: OidcIdp;
let pages: Server;
let app: string;
let w: Watched;
let page: Page;
let downIssuer: string;

/** An app page of another origin: the SDK from the server, a button per provider GET /v1/auth/settings offers; /cb ends the sign-in. */
function appPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>app</title>
<script type="module">
  import { createClient } from '${s.url}/sdk/plinth.js';
  const client = createClient('${s.url}', '${s.t.keys.publicKey}');
  const offered = await (await fetch('${s.url}/v1/auth/settings', { headers: { apikey: '${s.t.keys.publicKey}' } })).json();
  for (const p of offered.oidc_providers) {
    const b = document.createElement('button');
    b.textContent = 'Sign in with ' + p.name;
    b.onclick = () => client.auth.signInWithOAuth(p.id, { redirectTo: location.origin + '/cb' });
    document.body.append(b);
  }
  if (location.pathname === '/cb') {
    const { data, error } = await client.auth.handleOAuthCallback();
    const { data: got } = await client.auth.getSession();
    window.outcome = { user: data?.user ?? null, error: error && { code: error.code }, session: Boolean(got.session) };
  }
</script></head><body></body></html>`;
}

beforeAll(async () => {
  // The provider must know the callback URL, which holds the server's port: chosen first.
  const port = await freePort();
  kc = await startOidcIdp({ name: 'kc', redirectUris: [`http://127.0.0.1:${port}/v1/auth/oauth/kc/callback`] });
  downIssuer = `http://127.0.0.1:${await freePort()}`;
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(appPage());
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  s = await startConsole({ port, auth: { allowed_redirect_urls: [APP, app], cors_origins: ['http://127.0.0.1:*'] } });
  const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
  await page.goto(`${s.url}/console/auth?section=oidc`);
  await page.getByRole('heading', { name: 'Auth settings' }).waitFor();
});
afterAll(async () => {
  await s?.stop();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await kc?.stop();
});

async function save() {
  const answer = answerOf(page, '/api/v1/settings/auth', 'PATCH');
  await page.getByRole('button', { name: 'Save settings' }).click();
  return answer;
}
const field = (label: string) => page.getByLabel(label, { exact: true });
/** The message under a field (its role=alert), once there. */
const errorAt = (label: string) => field(label).locator('xpath=..').getByRole('alert');

/** A test sign-in's result page, in `tab`, once the provider sent the browser back. */
async function resultIn(tab: Page) {
  await tab.waitForURL(`${s.url}/console/auth/oidc-test?provider=kc&test=**`);
  await tab.getByRole('heading', { name: /^Test sign-in: / }).waitFor();
  // The provider's callback ran before the redirect: no pending state to wait for.
  await tab.getByRole('table').or(tab.getByText('The test sign-in failed')).first().waitFor();
}
const claimRow = (tab: Page, name: string) => tab.getByRole('row').filter({ has: tab.getByRole('rowheader', { name, exact: true }) });
/** A claim's row as the desktop width shows it: its visible cells' text, joined by `|`. */
const claim = async (tab: Page, name: string, nth = 0) =>
  (await claimRow(tab, name).nth(nth).locator(':is(th, td):visible').allInnerTexts()).join('|');

describe('OpenID Connect providers in the console', () => {
  it('adds a provider: its own checks first, then the server’s refusals at the issuer field in words, then saved', async () => {
    w.allow(400);
    await page.getByTestId('empty-state').getByText('No OpenID Connect provider yet').waitFor();
    await shot(page, 'auth-oidc-empty');
    await page.getByRole('button', { name: 'Add provider' }).first().click();
    // The new entry's ID field has the focus.
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.placeholder)).toBe('corp');

    // What the console refuses itself: no request is sent.
    let patched = 0;
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patched++;
    });
    await field('ID').fill('github');
    await field('Issuer URL').fill('http://sso.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => errorAt('ID').textContent()).toBe('is reserved (google, github, linkedin, microsoft, apple, email, phone)');
    expect(await errorAt('Issuer URL').textContent()).toBe('must be https (plain http only on localhost, 127.0.0.1 or [::1])');
    expect(await errorAt('Client ID').textContent()).toBe('must be the client id the provider gave');
    expect(patched).toBe(0);
    // The callback URL waits for a valid id.
    expect(await page.getByText('The callback URL to register at the provider appears once the ID is valid.').count()).toBe(1);

    await field('ID').fill('kc');
    await field('Name').fill('Keycloak');
    await field('Issuer URL').fill(downIssuer);
    await field('Client ID').fill(kc.clientId);
    await field('Client secret').fill(kc.clientSecret);
    await page.getByRole('switch', { name: 'Enable Keycloak' }).click();
    // The redirect URI to register at the provider, with a copy button.
    expect(await page.getByTestId('callback-kc').textContent()).toBe(`${s.url}/v1/auth/oauth/kc/callback`);
    await page.getByRole('button', { name: 'Copy the kc callback URL' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(`${s.url}/v1/auth/oauth/kc/callback`);
    expect(await page.getByRole('button', { name: 'Test sign-in' }).isDisabled()).toBe(true);

    // Nobody answers at that issuer: refused at its field, with its code in words; nothing saved.
    const down = await save();
    expect(down.status()).toBe(400);
    expect((await down.json()).details).toEqual([expect.objectContaining({ field: 'oidc_providers[0].issuer', code: 'oidc_unreachable' })]);
    await expect
      .poll(() => errorAt('Issuer URL').textContent())
      .toMatch(/^Unreachable: Plinth could not read the provider’s discovery document or keys \(oidc_unreachable\)\. /);
    expect(await errorAt('Issuer URL').textContent()).toContain(`${downIssuer}/.well-known/openid-configuration could not be reached`);
    expect(await field('Issuer URL').getAttribute('aria-invalid')).toBe('true');
    // The list above names the field as the page does.
    expect(await page.getByRole('alert').filter({ hasText: 'Nothing was saved' }).textContent()).toContain(
      'OpenID Connect “Keycloak”: Issuer URL — Unreachable:',
    );
    expect(s.t.settings.auth().oidc_providers).toEqual([]);
    await shot(page, 'auth-oidc-unreachable', { phone: true });

    // One character off (the trailing /): the provider names another issuer.
    await field('Issuer URL').fill(`${kc.issuer}/`);
    expect((await save()).status()).toBe(400);
    await expect
      .poll(() => errorAt('Issuer URL').textContent())
      .toMatch(/^Issuer mismatch: .* \(oidc_issuer_mismatch\)\. the discovery document names "/);
    expect(s.t.settings.auth().oidc_providers).toEqual([]);

    // The right issuer; scopes without email (a common slip): accepted, the secret comes back masked.
    await field('Issuer URL').fill(kc.issuer);
    await field('Scopes').fill('openid profile');
    await page.getByText('No email scope: most providers then send no email').waitFor();
    const ok = await save();
    expect(ok.status()).toBe(200);
    expect((await ok.json()).oidc_providers).toEqual([
      {
        id: 'kc',
        name: 'Keycloak',
        issuer: kc.issuer,
        client_id: kc.clientId,
        client_secret: '********',
        scopes: ['openid', 'profile'],
        token_endpoint_auth_method: 'client_secret_basic',
        enabled: true,
      },
    ]);
    expect(s.t.settings.auth().oidc_providers[0].client_secret).toBe(kc.clientSecret);
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    await expect.poll(() => field('Client secret').getAttribute('placeholder')).toBe('Stored — type to replace');
    expect(await page.getByRole('alert').count()).toBe(0);
    await shot(page, 'auth-oidc-saved', { phone: true });
    w.expectClean();
  });

  it('tests it: a new tab signs in at the provider and shows every claim with its source, naming email and email_verified as missing; the settings tab waits for it', async () => {
    kc.accounts.set('ada', { email: 'ada@corp.example', email_verified: true, name: 'Ada Admin' });
    const opened = page.context().waitForEvent('page');
    await page.getByRole('button', { name: 'Test sign-in with Keycloak' }).click();
    const tab = await opened;
    const tabErrors: string[] = [];
    tab.on('pageerror', (e) => tabErrors.push(e.message));
    // The provider's own sign-in page, in the new tab.
    await tab.waitForURL(`${kc.issuer}/interaction/**`);
    // The settings tab kept its page, and leads to the result, which waits for the sign-in.
    await page.getByRole('status').filter({ hasText: 'A new tab opened at Keycloak’s sign-in page' }).waitFor();
    await page.getByRole('link', { name: 'See the result here' }).click();
    await page.getByRole('status').filter({ hasText: 'Waiting for the sign-in at the provider' }).waitFor();
    await shot(page, 'auth-oidc-result-pending');
    await tab.fill('#login', 'ada');
    await tab.click('#signin');
    await resultIn(tab);

    const missing = tab.getByRole('status').filter({ hasText: 'Missing: email, email_verified' });
    await missing.waitFor();
    expect(await tab.getByTestId('missing-email').textContent()).toMatch(/^email: the user’s email address: without it/);
    expect(await tab.getByTestId('missing-email_verified').textContent()).toMatch(/never linked to an existing account/);
    expect(await tab.getByTestId('missing-sub').count()).toBe(0);
    // Every claim, with where it came from: the ID token's, then the userinfo endpoint's.
    expect(await claim(tab, 'sub')).toBe('sub|ada|ID token');
    expect(await claim(tab, 'iss')).toBe(`iss|${kc.issuer}|ID token`);
    expect(await claim(tab, 'name', 1)).toBe('name|Ada Admin|userinfo endpoint');
    expect(await claimRow(tab, 'email').count()).toBe(0);
    expect(await tab.getByTestId('profile-verified').textContent()).toBe('No: never linked to an existing account by email');
    await shot(tab, 'auth-oidc-result-missing', { phone: true });
    expect(tabErrors).toEqual([]);

    // The waiting page saw the sign-in end (it asks again while the test is pending).
    await tab.close();
    await page.getByRole('status').filter({ hasText: 'Missing: email, email_verified' }).waitFor();
    expect(await page.getByText('Waiting for the sign-in at the provider').count()).toBe(0);
    w.expectClean();
  });

  it('with the email scope, a test in the same tab finds everything sign-in needs', async () => {
    await page.getByRole('link', { name: 'Back to the OpenID Connect providers' }).click();
    // Typed key by key: the space before the new scope stays.
    await field('Scopes').press('End');
    await field('Scopes').pressSequentially(' email');
    expect(await field('Scopes').inputValue()).toBe('openid profile email');
    expect(await page.getByTestId('test-uses-saved').textContent()).toBe(
      'This provider has unsaved changes: the test uses the saved settings.',
    );
    expect((await save()).status()).toBe(200);
    expect(s.t.settings.auth().oidc_providers[0].scopes).toEqual(['openid', 'profile', 'email']);
    // Gone once the page has the saved settings back (the answer comes before the page re-renders).
    await expect.poll(() => page.getByTestId('test-uses-saved').count()).toBe(0);

    // From the result page, Test again: this tab goes to the provider, which still knows Ada.
    const opened = page.context().waitForEvent('page');
    await page.getByRole('button', { name: 'Test sign-in with Keycloak' }).click();
    const tab = await opened;
    await resultIn(tab);
    const first = tab.url();
    await tab.getByRole('button', { name: 'Test again' }).click();
    await tab.waitForURL((u) => u.href !== first && u.pathname.endsWith('/console/auth/oidc-test'));
    await tab.getByRole('status').filter({ hasText: 'Everything sign-in needs was sent' }).waitFor();
    expect(await claim(tab, 'email')).toBe('email|ada@corp.example|ID token');
    expect(await claim(tab, 'email_verified')).toBe('email_verified|true|ID token');
    expect(await tab.getByTestId('profile-verified').textContent()).toBe('Yes: the user is linked to an existing account with this email');
    await shot(tab, 'auth-oidc-result-ok', { phone: true });
    await tab.close();
    w.expectClean();
  });

  it('an end user of an app signs in with it (the SDK’s signInWithOAuth with its id)', async () => {
    kc.accounts.set('eve', { email: 'eve@corp.example', email_verified: true, name: 'Eve User' });
    const context = await s.browser.newContext();
    try {
      const user = await context.newPage();
      await user.goto(`${app}/`);
      await user.getByRole('button', { name: 'Sign in with Keycloak' }).click();
      await user.waitForURL(`${kc.issuer}/interaction/**`);
      await user.fill('#login', 'eve');
      await user.click('#signin');
      await user.waitForURL(`${app}/cb`);
      const outcome = (await (await user.waitForFunction(() => (window as { outcome?: unknown }).outcome)).jsonValue()) as Outcome;
      expect(outcome).toEqual({
        user: expect.objectContaining({ email: 'eve@corp.example', identities: [expect.objectContaining({ provider: 'kc' })] }),
        error: null,
        session: true,
      });
    } finally {
      await context.close();
    }
    // The admin's tests signed nobody in: Eve is the project's only user.
    const users = await s.t.app.inject({ url: '/api/v1/users', headers: s.t.as.service });
    expect(users.json().map((u: { email: string }) => u.email)).toEqual(['eve@corp.example']);
  });

  it('a refused test says why; the provider is renamed, then removed', async () => {
    // An ID token altered in transit: the test fails, and its page says which check refused it.
    kc.tamperNext((tok) => {
      const [h, p, sig] = tok.split('.');
      const claims = { ...JSON.parse(Buffer.from(p, 'base64url').toString()), email: 'mallory@evil.example' };
      return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    });
    const opened = page.context().waitForEvent('page');
    await page.getByRole('button', { name: 'Test sign-in with Keycloak' }).click();
    const tab = await opened;
    await resultIn(tab);
    const failed = tab.getByRole('alert').filter({ hasText: 'The test sign-in failed' });
    await failed.waitFor();
    expect(await failed.textContent()).toBe(
      'The test sign-in failedthe ID token signature does not verify with the provider keycode: oauth_failed',
    );
    // No claim comes from a token that does not verify.
    expect(await tab.getByRole('table').count()).toBe(0);
    await shot(tab, 'auth-oidc-result-failed', { phone: true });
    await tab.close();

    await field('Name').fill('Keycloak SSO');
    expect((await save()).status()).toBe(200);
    expect(s.t.settings.auth().oidc_providers[0].name).toBe('Keycloak SSO');
    const offered = await s.t.app.inject({ url: '/v1/auth/settings', headers: s.t.as.anon });
    expect(offered.json().oidc_providers).toEqual([{ id: 'kc', name: 'Keycloak SSO' }]);

    await page.getByRole('button', { name: 'Remove Keycloak SSO' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove provider' }).click();
    await page.getByTestId('empty-state').waitFor();
    expect(s.t.settings.auth().oidc_providers).toHaveLength(1);
    expect((await save()).status()).toBe(200);
    expect(s.t.settings.auth().oidc_providers).toEqual([]);
    w.expectClean();
  });
});
