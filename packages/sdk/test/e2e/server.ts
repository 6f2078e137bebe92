import { type AddressInfo, createServer } from 'node:net';
import { createAuthServer, lastToken, mailsTo } from '../../../server/test/auth.js';
import type { TestServer } from '../../../server/test/harness.js';
import { type AuthClient, createClient, type ClientOptions, memoryStorage } from '../../src/index.js';
import type { AuthChangeEvent, Session, SupportedStorage } from '../../src/types.js';

export { codesTo, email, lastCode } from '../../../server/test/auth.js';

/** The app pages the auth emails link to (allowlisted in `startServer`). */
export const APP = 'https://app.example.com';

export interface E2eServer {
  t: TestServer;
  /** `http://127.0.0.1:<port>`: what an app passes to `createClient`. */
  url: string;
  publicKey: string;
}

export interface StartOptions {
  /** Send SMS to the harness's webhook SMS sink (`t.sms`); without it the server has no SMS provider. */
  sms?: boolean;
  /** The project's plan, set before the auth settings (phone sign-in needs a paid one). */
  plan?: 'free' | 'pro' | 'team' | 'enterprise';
  /** More server environment, e.g. OAUTH_GITHUB_URL for a local provider. */
  env?: Record<string, string>;
  /** The port to listen on (default any free one): set with `PUBLIC_URL` when providers must redirect a browser back here. */
  port?: number;
}

/**
 * A whole Plinth (the server's own test harness: PGlite, or PostgreSQL with PLINTH_TEST_DB)
 * listening on a real loopback port, with the app pages of the auth emails allowlisted and
 * `settings` (auth settings, docs/api.md §4) applied.
 * @example const s = await startServer(); const client = createClient(s.url, s.publicKey);
 * @example const s = await startServer({ phone_enabled: true }, { sms: true, plan: 'pro' });
 */
export async function startServer(settings: Record<string, unknown> = {}, options: StartOptions = {}): Promise<E2eServer> {
  const t = await createAuthServer(options.env ?? {}, { sms: options.sms ?? false });
  try {
    if (options.plan) await t.settings.updateProject({ plan: options.plan });
    // One update: two in a row can lose the second on PostgreSQL (settings.test.ts).
    await t.settings.updateAuth({
      allowed_redirect_urls: [APP],
      email_verification_url: `${APP}/verify`,
      password_reset_url: `${APP}/reset`,
      ...settings,
    });
    await t.app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  } catch (error) {
    await t.stop();
    throw error;
  }
  const { port } = t.app.server.address() as AddressInfo;
  return { t, url: `http://127.0.0.1:${port}`, publicKey: t.keys.publicKey };
}

/** A loopback port free right now (for a server whose PUBLIC_URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A Node client of the server; `track` it so `afterEach` disposes it. */
export function clientOf(s: E2eServer, options: ClientOptions = {}) {
  return createClient(s.url, s.publicKey, options);
}

/** A storage that already holds `session`, as a returning visitor's would. */
export function storageWith(s: E2eServer, session: Session, key = storageKey(s)): SupportedStorage {
  const storage = memoryStorage();
  storage.setItem(key, JSON.stringify(session));
  return storage;
}

/** The SDK's default storage key for this server. */
export function storageKey(s: E2eServer): string {
  return `plinth.auth.${new URL(s.url).host}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many mails of `kind` went to `to` so far. */
export async function mailCount(s: E2eServer, to: string, kind: string): Promise<number> {
  return (await mailsTo(s.t, to)).filter((m) => m.kind === kind).length;
}

/**
 * The token of the next mail of `kind` to `to`, once more than `seen` such mails arrived
 * (delivery goes through the outbox and a real SMTP sink, so it is polled).
 * @example const token = await nextToken(s, addr, 'verification', 0);
 */
export async function nextToken(s: E2eServer, to: string, kind: string, seen = 0): Promise<string> {
  // A deadline, not a count of tries: a busy machine may take a while (the test's own timeout is later).
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    if ((await mailCount(s, to, kind)) > seen) return lastToken(s.t, to, kind);
    await sleep(100);
  }
  throw new Error(`no ${kind} mail to ${to} within 30 s (had ${seen})`);
}

/** The newest link of `kind` mailed to `to` (after `nextToken` saw it arrive). */
export async function lastLink(s: E2eServer, to: string, kind: string): Promise<string> {
  return (await mailsTo(s.t, to)).filter((m) => m.kind === kind).at(-1)?.link ?? '';
}

/**
 * What the server now says about a stored session: a fresh client that finds `session` in its
 * storage (a second device, or the same browser after a reload) asks to refresh it.
 * @example expect((await refreshAs(s, old)).error?.code).toBe('invalid_refresh_token');
 */
export async function refreshAs(s: E2eServer, session: Session) {
  const client = clientOf(s, { auth: { storage: storageWith(s, session), autoRefreshToken: false } });
  try {
    return await client.auth.refreshSession();
  } finally {
    client.auth.dispose();
  }
}

/**
 * Records every auth event of a client in order.
 * @example const rec = record(client); await rec.until('SIGNED_OUT'); expect(rec.names()).toEqual([...]);
 */
export function record(client: { auth: { onAuthStateChange: AuthClient['onAuthStateChange'] } }) {
  const events: Array<{ event: AuthChangeEvent; session: Session | null }> = [];
  client.auth.onAuthStateChange((event, session) => {
    events.push({ event, session });
  });
  const count = (event: AuthChangeEvent) => events.filter((e) => e.event === event).length;
  return {
    events,
    names: () => events.map((e) => e.event),
    last: (event: AuthChangeEvent) => events.filter((e) => e.event === event).at(-1),
    /** Resolves once `event` was delivered `times` times; fails after 30 s. */
    async until(event: AuthChangeEvent, times = 1): Promise<void> {
      const end = Date.now() + 30_000;
      while (count(event) < times && Date.now() < end) await sleep(50);
      if (count(event) < times) throw new Error(`${event} ×${times} not delivered within 30 s; got ${events.map((e) => e.event)}`);
    },
  };
}

/** Collects the clients of a test so `afterEach` can stop their timers. */
export function tracker() {
  const clients: Array<{ auth: { dispose(): void } }> = [];
  return {
    track<T extends { auth: { dispose(): void } }>(client: T): T {
      clients.push(client);
      return client;
    },
    disposeAll(): void {
      for (const c of clients.splice(0)) c.auth.dispose();
    },
  };
}
