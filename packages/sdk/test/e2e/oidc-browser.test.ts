import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OidcIdp, startOidcIdp } from '../../../server/test/oidc-provider.js';
import type { PlinthClient } from '../../src/index.js';
import { APP, clientOf, type E2eServer, email, freePort, startServer } from './server.js';
import { launchChromium } from '../../../server/test/chromium.js';

// Sign-in with any OpenID Connect provider, in Debian's Chromium: an app page of another origin
// loads the SDK from the server, its buttons call signInWithOAuth('<id>'), the browser goes to the
// provider (two real OpenID Providers, npm oidc-provider, with different settings), the user types
// an account on the provider's sign-in page, and the app's callback page finishes with
// handleOAuthCallback. The checks the server makes are spelled out in
// packages/server/src/auth/oauth/oidc.test.ts; here a user's browser sees their outcome.

interface Outcome {
  user: { id: string; email: string | null; email_confirmed_at: string | null; identities: Array<{ provider: string }> } | null;
  error: { code: string; message: string } | null;
  session: boolean;
}

declare global {
  interface Window {
    app: { client: PlinthClient };
    outcome?: Outcome;
  }
}

const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'ops@example.com', password: 'a long admin passphrase' };

let s: E2eServer;
let corp: OidcIdp;
let pair: OidcIdp;
let pages: Server;
let app: string;
let browser: Browser;
let n = 0;

/**
 * The app: a sign-in button per provider that GET /v1/auth/settings offers, named as it says;
 * on /cb, the end of the sign-in.
 */
function appPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>app</title>
<script type="module">
  import { createClient } from '${s.url}/sdk/plinth.js';
  const client = createClient('${s.url}', '${s.publicKey}');
  const offered = await (await fetch('${s.url}/v1/auth/settings', { headers: { apikey: '${s.publicKey}' } })).json();
  for (const p of offered.oidc_providers) {
    const b = document.createElement('button');
    b.id = p.id;
    b.textContent = 'Sign in with ' + p.name;
    b.onclick = () => client.auth.signInWithOAuth(p.id, { redirectTo: location.origin + '/cb' });
    document.body.append(b);
  }
  window.app = { client };
  if (location.pathname === '/cb') {
    const { data, error } = await client.auth.handleOAuthCallback();
    const { data: got } = await client.auth.getSession();
    window.outcome = { user: data?.user ?? null, error: error && { code: error.code, message: error.message }, session: Boolean(got.session) };
  }
</script></head><body></body></html>`;
}

beforeAll(async () => {
  // The providers send the browser back to PUBLIC_URL: the server's real address, known first.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  corp = await startOidcIdp({ name: 'corp', redirectUris: [`${base}/v1/auth/oauth/corp/callback`] });
  pair = await startOidcIdp({
    name: 'pair',
    redirectUris: [`${base}/v1/auth/oauth/pair/callback`],
    pairwise: true,
    claimsOnlyAtUserinfo: true,
    alg: 'ES256',
    tokenAuthMethod: 'client_secret_post',
  });
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(appPage());
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  s = await startServer(
    {
      cors_origins: ['http://127.0.0.1:*'],
      allowed_redirect_urls: [APP, app],
      oidc_providers: [
        { id: 'corp', name: 'Corp SSO', issuer: corp.issuer, client_id: corp.clientId, client_secret: corp.clientSecret, enabled: true },
        {
          id: 'pair',
          name: 'Pairwise',
          issuer: pair.issuer,
          client_id: pair.clientId,
          client_secret: pair.clientSecret,
          token_endpoint_auth_method: 'client_secret_post',
          enabled: true,
        },
      ],
    },
    { env: { PUBLIC_URL: base, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }, port },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await s?.t.stop();
  await corp?.stop();
  await pair?.stop();
});

function account(idp: OidcIdp, claims: Record<string, unknown>): string {
  const name = `user${++n}`;
  idp.accounts.set(name, claims);
  return name;
}

/**
 * The user presses the provider's button, signs in at the provider as `who` (unless the provider
 * remembers them), and lands on the app's callback page: what the SDK made of it.
 */
async function signInWith(page: Page, provider: 'corp' | 'pair', who: string | null): Promise<Outcome> {
  const idp = provider === 'corp' ? corp : pair;
  await page.goto(`${app}/`);
  await page.waitForFunction(() => Boolean(window.app));
  expect(await page.textContent(`#${provider}`)).toBe(`Sign in with ${provider === 'corp' ? 'Corp SSO' : 'Pairwise'}`);
  await page.click(`#${provider}`);
  if (who !== null) {
    await page.waitForURL(`${idp.issuer}/interaction/**`);
    await page.fill('#login', who);
    await page.click('#signin');
  }
  await page.waitForURL(`${app}/cb**`);
  const outcome = await page.waitForFunction(() => window.outcome, undefined, { timeout: 15_000 });
  return (await outcome.jsonValue()) as Outcome;
}

async function inNewBrowser<T>(fn: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    return await fn(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

describe('signInWithOAuth with an OpenID Connect provider, in Chromium', () => {
  it('signs up, then signs in again (the provider remembers the user): the same account', async () => {
    const addr = email('b-corp');
    const who = account(corp, { email: addr, email_verified: true, name: 'Ada Browser' });
    await inNewBrowser(async (page) => {
      const first = await signInWith(page, 'corp', who);
      expect(first.error).toBeNull();
      expect(first.session).toBe(true);
      expect(first.user).toMatchObject({ email: addr, identities: [{ provider: 'corp' }] });
      expect(first.user?.email_confirmed_at).not.toBeNull();
      // The tokens and the flow mark are gone from the address bar.
      expect(page.url()).toBe(`${app}/cb`);
      await page.evaluate(() => window.app.client.auth.signOut());
      const again = await signInWith(page, 'corp', null);
      expect(again.error).toBeNull();
      expect(again.user?.id).toBe(first.user?.id);
    });
  });

  it('pairwise subjects and the email from the userinfo endpoint', async () => {
    const addr = email('b-pair');
    const who = account(pair, { email: addr, email_verified: true });
    const outcome = await inNewBrowser((page) => signInWith(page, 'pair', who));
    expect(outcome.error).toBeNull();
    expect(outcome.user).toMatchObject({ email: addr, identities: [{ provider: 'pair' }] });
    expect(pair.lastIdToken?.email).toBeUndefined();
    expect(pair.lastIdToken?.sub).toBe(pair.subjectOf(who));
  });

  it('links to the account with that email only when the provider verified it', async () => {
    const addr = email('b-link');
    const node = clientOf(s);
    const owner = await node.auth.signUp({ email: addr, password: PASSWORD });
    node.auth.dispose();
    const ownerId = owner.data?.user?.id;
    expect(ownerId).toBeTruthy();
    const unverified = await inNewBrowser((page) => signInWith(page, 'pair', account(pair, { email: addr, email_verified: false })));
    expect(unverified.error).toBeNull();
    expect(unverified.user?.id).not.toBe(ownerId);
    expect(unverified.user?.email).toBeNull();
    const verified = await inNewBrowser((page) => signInWith(page, 'corp', account(corp, { email: addr, email_verified: true })));
    expect(verified.user?.id).toBe(ownerId);
    expect(verified.user?.identities.map((i) => i.provider).sort()).toEqual(['corp', 'email']);
  });

  it('a tampered ID token: the app gets oauth_failed and no session', async () => {
    const who = account(corp, { email: email('b-tamper'), email_verified: true });
    corp.tamperNext((tok) => {
      const [h, , sig] = tok.split('.');
      const claims = { ...decodeJwt(tok), email: 'mallory@evil.example' };
      return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    });
    const outcome = await inNewBrowser((page) => signInWith(page, 'corp', who));
    expect(outcome).toEqual({
      user: null,
      session: false,
      error: { code: 'oauth_failed', message: 'corp sign-in could not be completed; try again.' },
    });
  });

  it('an ID token with another nonce: oauth_failed', async () => {
    const who = account(corp, { email: email('b-nonce'), email_verified: true });
    corp.nonceNext = 'nonce-of-another-sign-in';
    const outcome = await inNewBrowser((page) => signInWith(page, 'corp', who));
    expect(outcome.error?.code).toBe('oauth_failed');
    expect(outcome.session).toBe(false);
  });

  it('the provider rotates its signing key: the next sign-in works', async () => {
    const who = account(corp, { email: email('b-rotate'), email_verified: true });
    const before = await inNewBrowser((page) => signInWith(page, 'corp', who));
    const header = (await corp.sign({})).split('.')[0];
    await corp.rotateKeys();
    expect((await corp.sign({})).split('.')[0]).not.toBe(header);
    const jwks = corp.hits.jwks;
    const after = await inNewBrowser((page) => signInWith(page, 'corp', who));
    expect(after.error).toBeNull();
    expect(after.user?.id).toBe(before.user?.id);
    // The server knew the old key only: the new kid made it fetch the JWKS once more.
    expect(corp.hits.jwks).toBe(jwks + 1);
  });

  it('an admin saving a provider whose issuer cannot be reached, from the browser: refused on its field with oidc_unreachable, nothing saved', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const answer = await inNewBrowser(async (page) => {
      // A page of the server's own origin, as the console is: the admin's cookie and CSRF rule.
      await page.goto(`${s.url}/health`);
      return page.evaluate(
        async ([admin, issuer]) => {
          const json = { 'content-type': 'application/json', 'x-plinth-admin': '1' };
          const login = await fetch('/api/v1/admin/login', { method: 'POST', headers: json, body: JSON.stringify(admin) });
          if (!login.ok) return { status: login.status, body: await login.json() };
          const current = await (await fetch('/api/v1/settings/auth', { headers: json })).json();
          const entry = { id: 'down', name: 'Down', issuer, client_id: 'c', client_secret: 's', enabled: true };
          const res = await fetch('/api/v1/settings/auth', {
            method: 'PATCH',
            headers: json,
            body: JSON.stringify({ oidc_providers: [...current.oidc_providers, entry] }),
          });
          return { status: res.status, body: await res.json() };
        },
        [ADMIN, down] as const,
      );
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 'invalid_settings',
      details: [{ field: 'oidc_providers[2].issuer', code: 'oidc_unreachable', message: expect.stringContaining(down) }],
    });
    expect(s.t.settings.auth().oidc_providers.map((p) => p.id)).toEqual(['corp', 'pair']);
  });

  it("an admin's test sign-in lands on the console's result page, which can read every claim", async () => {
    const who = account(pair, { name: 'Tess Browser' });
    const res = await s.t.app.inject({ method: 'POST', url: '/api/v1/settings/auth/oidc/pair/test', headers: s.t.as.service });
    expect(res.statusCode, res.body).toBe(200);
    const { url, result_url, test_id } = res.json();
    await inNewBrowser(async (page) => {
      await page.goto(url);
      await page.fill('#login', who);
      await page.click('#signin');
      await page.waitForURL(result_url);
    });
    const result = (await s.t.app.inject({ url: `/api/v1/settings/auth/oidc/pair/tests/${test_id}`, headers: s.t.as.service })).json();
    expect(result).toMatchObject({ status: 'done', missing: ['email', 'email_verified'] });
    expect(result.claims).toEqual(expect.arrayContaining([{ name: 'name', value: 'Tess Browser', source: 'userinfo' }]));
  });
});
