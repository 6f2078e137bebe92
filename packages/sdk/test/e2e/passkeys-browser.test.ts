import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../server/src/auth/mfa/totp.js';
import type { PlinthClient } from '../../src/index.js';
import { lastToken } from '../../../server/test/auth.js';
import { APP, type E2eServer, email, startServer } from './server.js';

// Issue 27, passkeys: the SDK the server hosts, in Debian's Chromium with a CDP virtual
// authenticator (WebAuthn.addVirtualAuthenticator: a platform authenticator with resident keys
// and user verification), against the real server. WebAuthn takes no IP address as relying
// party: the page is http://localhost:<port> and the RP ID the host of PUBLIC_URL, localhost.

declare global {
  interface Window {
    pk: { client: PlinthClient; events: string[] };
  }
}

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PASSWORD = 'correct horse battery';

let s: E2eServer;
let pages: Server;
let app: string;
let browser: Browser;

function appPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>plinth passkeys</title>
<script type="module">
  import { createClient } from '${s.url}/sdk/plinth.js';
  const client = createClient('${s.url}', '${s.publicKey}');
  const events = [];
  client.auth.onAuthStateChange((event) => { events.push(event); });
  window.pk = { client, events };
</script></head><body>plinth passkeys</body></html>`;
}

beforeAll(async () => {
  s = await startServer({
    cors_origins: ['http://localhost:*'],
    passkey_enabled: true,
    magic_link_enabled: true,
    magic_link_url: `${APP}/magic`,
  });
  const res = await s.t.sql(`
    create table notes (id bigserial primary key, body text not null, user_id uuid default auth.uid());
    create policy own on notes using (user_id = auth.uid()) with check (user_id = auth.uid());
    insert into storage.buckets (id) values ('docs');`);
  expect(res.statusCode, res.body).toBe(200);
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(appPage());
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://localhost:${(pages.address() as AddressInfo).port}`;
  await s.t.settings.updateAuth({ passkey_origins: [app] });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await s?.t.stop();
});

/** A fresh browser profile with one virtual authenticator (a phone or laptop with a fingerprint reader). */
async function device(): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  await page.goto(`${app}/`);
  await page.waitForFunction(() => window.pk?.events.includes('INITIAL_SESSION'), undefined, { timeout: 10_000 });
  return { context, page, cdp, authenticatorId };
}

const api = (token: string, path: string) =>
  s.t.app.inject({ method: 'GET', url: path, headers: { apikey: s.publicKey, authorization: `Bearer ${token}` } });
const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { aal: string; amr: Array<{ method: string }> };

describe('passkeys in Chromium', () => {
  it('signs up with a passkey alone, adds a TOTP factor, and a stolen password-only token reads nothing', async () => {
    const { context, page } = await device();
    const addr = email('passkey');
    try {
      const signedUp = await page.evaluate(async (e) => {
        const { data, error } = await window.pk.client.auth.signUpWithPasskey({ email: e });
        return { error, token: data?.session?.access_token ?? null, next: data?.session?.next_aal ?? null };
      }, addr);
      expect(signedUp.error).toBeNull();
      // The virtual authenticator verified the user: the passkey alone is aal2.
      expect(claims(signedUp.token as string)).toMatchObject({ aal: 'aal2', amr: [{ method: 'passkey' }] });

      const enrolled = await page.evaluate(async () => (await window.pk.client.auth.mfa.enroll({ factorType: 'totp' })).data);
      expect(enrolled?.status).toBe('unverified');
      const secret = enrolled?.totp.secret as string;
      const verified = await page.evaluate(
        async ([factorId, code]) => {
          const { error } = await window.pk.client.auth.mfa.challengeAndVerify({ factorId, code });
          const aal = (await window.pk.client.auth.mfa.getAuthenticatorAssuranceLevel()).data;
          return { error, aal };
        },
        [enrolled?.id as string, totpCode(secret, s.t.clock.now())] as const,
      );
      expect(verified.error).toBeNull();
      expect(verified.aal).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
      // Callbacks run after the call returns (outside the SDK's lock): wait for the event.
      await page.waitForFunction(() => window.pk.events.includes('MFA_CHALLENGE_VERIFIED'), undefined, { timeout: 10_000 });
      // The owner sets a password too (at aal2).
      const pw = await page.evaluate(async (p) => (await window.pk.client.auth.updateUser({ password: p })).error, PASSWORD);
      expect(pw).toBeNull();

      // Someone who learns the password signs in: an aal1 token that reads nothing.
      const stolen = await s.t.app.inject({
        method: 'POST',
        url: '/v1/auth/signin',
        headers: { apikey: s.publicKey },
        payload: { email: addr, password: PASSWORD },
      });
      expect(stolen.statusCode, stolen.body).toBe(200);
      expect(stolen.json().next_aal).toBe('aal2');
      const token = stolen.json().access_token;
      for (const path of ['/api/v1/db/notes', '/api/v1/storage/object/docs', '/v1/auth/passkeys']) {
        const res = await api(token, path);
        expect([res.statusCode, res.json().code], path).toEqual([403, 'mfa_required']);
      }
      // The owner's passkey session reads.
      const mine = await page.evaluate(async () => (await window.pk.client.from('notes').select('*')).error);
      expect(mine).toBeNull();
    } finally {
      await context.close();
    }
  });

  it('registers a passkey for a signed-in user; after sign-out a username-less sign-in; a removed passkey is refused', async () => {
    const { context, page } = await device();
    const addr = email('register');
    try {
      const out = await page.evaluate(
        async ([e, p]) => {
          const auth = window.pk.client.auth;
          await auth.signUp({ email: e, password: p });
          const registered = await auth.passkeys.register({ name: 'Laptop' });
          const listed = await auth.passkeys.list();
          await auth.signOut();
          const back = await auth.signInWithPasskey();
          return {
            registered,
            listed: listed.data,
            back: { error: back.error, email: back.data?.user.email, token: back.data?.session.access_token },
          };
        },
        [addr, PASSWORD] as const,
      );
      expect(out.registered.error).toBeNull();
      expect(out.registered.data).toMatchObject({ name: 'Laptop', backed_up: false });
      expect(out.listed).toHaveLength(1);
      expect(out.back.error).toBeNull();
      expect(out.back.email).toBe(addr);
      expect(claims(out.back.token as string).aal).toBe('aal2');

      const removed = await page.evaluate(async () => {
        const auth = window.pk.client.auth;
        const list = (await auth.passkeys.list()).data ?? [];
        const gone = await auth.passkeys.remove(list[0].id);
        await auth.signOut();
        // The authenticator still holds the credential; the server no longer knows it.
        const again = await auth.signInWithPasskey();
        return { gone: gone.error, again: again.error };
      });
      expect(removed.gone).toBeNull();
      expect(removed.again).toMatchObject({ code: 'passkey_invalid', status: 400 });
    } finally {
      await context.close();
    }
  });

  it('an origin the project does not accept is refused', async () => {
    const { context, page } = await device();
    try {
      const registered = await page.evaluate(
        async ([e, p]) => {
          const auth = window.pk.client.auth;
          await auth.signUp({ email: e, password: p });
          const r = await auth.passkeys.register();
          await auth.signOut();
          return r.error;
        },
        [email('origin'), PASSWORD] as const,
      );
      expect(registered).toBeNull();
      await s.t.settings.updateAuth({ passkey_origins: [] });
      try {
        const refused = await page.evaluate(async () => (await window.pk.client.auth.signInWithPasskey()).error);
        expect(refused).toMatchObject({ code: 'passkey_invalid' });
        expect(refused?.message).toMatch(/origin/i);
      } finally {
        await s.t.settings.updateAuth({ passkey_origins: [app] });
      }
    } finally {
      await context.close();
    }
  });

  it('a cloned credential whose signature counter went back is refused', async () => {
    const { context, page, cdp, authenticatorId } = await device();
    try {
      const first = await page.evaluate(
        async ([e, p]) => {
          const auth = window.pk.client.auth;
          await auth.signUp({ email: e, password: p });
          await auth.passkeys.register();
          await auth.signOut();
          const a = await auth.signInWithPasskey();
          await auth.signOut();
          return a.error;
        },
        [email('clone'), PASSWORD] as const,
      );
      expect(first).toBeNull();
      // The copy an attacker made before those sign-ins: same key, older counter.
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0].signCount).toBeGreaterThan(0);
      await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0].credentialId });
      await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0], signCount: 0 } });
      const cloned = await page.evaluate(async () => (await window.pk.client.auth.signInWithPasskey()).error);
      expect(cloned).toMatchObject({ code: 'passkey_invalid' });
    } finally {
      await context.close();
    }
  });

  it('passkey-first sign-up under the proof rule: no session before the link; the passkey the link was sent for survives it', async () => {
    const { context, page } = await device();
    const addr = email('confirm');
    await s.t.settings.updateAuth({ require_email_confirmation: true });
    try {
      const pending = await page.evaluate(async (e) => {
        const auth = window.pk.client.auth;
        const up = await auth.signUpWithPasskey({ email: e });
        const early = await auth.signInWithPasskey();
        return { error: up.error, session: up.data?.session ?? null, early: early.error };
      }, addr);
      expect(pending).toMatchObject({ error: null, session: null, early: { code: 'email_not_confirmed' } });
      const proved = await s.t.app.inject({
        method: 'POST',
        url: '/v1/auth/verify-email',
        headers: { apikey: s.publicKey },
        payload: { token: await lastToken(s.t, addr, 'verification') },
      });
      expect(proved.statusCode, proved.body).toBe(200);
      const back = await page.evaluate(async () => {
        const r = await window.pk.client.auth.signInWithPasskey();
        return { error: r.error, email: r.data?.user.email };
      });
      expect(back).toEqual({ error: null, email: addr });
    } finally {
      await s.t.settings.updateAuth({ require_email_confirmation: false });
      await context.close();
    }
  });

  it('a passkey registered before the owner proved the address signs no one in after the proof', async () => {
    // The attacker signs up with the owner's address (no confirmation asked) and adds a passkey.
    const attacker = await device();
    const addr = email('squat');
    try {
      const planted = await attacker.page.evaluate(
        async ([e, p]) => {
          const auth = window.pk.client.auth;
          await auth.signUp({ email: e, password: p });
          const r = await auth.passkeys.register();
          await auth.signOut();
          return r.error;
        },
        [addr, PASSWORD] as const,
      );
      expect(planted).toBeNull();
      // The owner proves the address with a magic link.
      const headers = { apikey: s.publicKey };
      expect(
        (await s.t.app.inject({ method: 'POST', url: '/v1/auth/request-magic-link', headers, payload: { email: addr } })).statusCode,
      ).toBe(200);
      const owner = await s.t.app.inject({
        method: 'POST',
        url: '/v1/auth/signin-magic-link',
        headers,
        payload: { token: await lastToken(s.t, addr, 'magic_link') },
      });
      expect(owner.statusCode, owner.body).toBe(200);
      const refused = await attacker.page.evaluate(async () => (await window.pk.client.auth.signInWithPasskey()).error);
      expect(refused).toMatchObject({ code: 'passkey_invalid' });
    } finally {
      await attacker.context.close();
    }
  });
});
