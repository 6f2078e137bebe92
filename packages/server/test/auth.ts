import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { createTestServer, type TestServer } from './harness.js';

/** Auth test helpers: a server whose per-IP request limit does not get in the way, and the user flows. */
export async function createAuthServer(env: Record<string, string> = {}, options: { sms?: boolean } = {}): Promise<TestServer> {
  return createTestServer({ AUTH_RATE_REQUESTS_IP: '100000/60', AUTH_RATE_SIGNIN_IP: '100000/900', ...env }, { smtp: true, ...options });
}

export function call(t: TestServer, method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown, headers?: Record<string, string>) {
  return t.app.inject({
    method,
    url: `/v1/auth/${path}`,
    headers: { ...t.as.anon, 'user-agent': 'vitest-agent', ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export function asUser(t: TestServer, accessToken: string) {
  return t.as.user(accessToken);
}

/** Changes auth settings (the real SettingsStore once it lands). */
export async function setAuth(t: TestServer, patch: Record<string, unknown>) {
  await t.settings.updateAuth(patch);
}

let n = 0;
/** A fresh address per call, so per-recipient limits of one test do not leak into another. */
export function email(tag = 'user'): string {
  return `${tag}-${process.pid}-${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

export async function signUp(t: TestServer, addr: string, password = 'correct horse battery') {
  const res = await call(t, 'POST', 'signup', { email: addr, password });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export async function signIn(t: TestServer, addr: string, password = 'correct horse battery') {
  const res = await call(t, 'POST', 'signin', { email: addr, password });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/**
 * The emails sent to `to` so far, oldest first, as `{kind, link}`: the outbox is drained
 * first, then read from the SMTP sink (the link parsed out of the real message's text), or
 * from the dev inbox when the server has no SMTP.
 */
export async function mailsTo(t: TestServer, to: string): Promise<Array<{ kind: string; link: string }>> {
  await t.auth.settled();
  await t.messaging.outbox.drain();
  if (t.mail) {
    return t.mail.received.filter((m) => m.to.includes(to)).map((m) => ({ kind: m.kind, link: m.link ?? '' }));
  }
  const inbox = await t.messaging.devInbox({ limit: 1000, offset: 0, to });
  return inbox.reverse().map((m) => ({ kind: m.kind, link: /https?:\/\/\S+/.exec(m.text)?.[0] ?? '' }));
}

/** The `token` query parameter of the newest link mailed to `to`. */
export async function lastToken(t: TestServer, to: string, kind?: string): Promise<string> {
  const mails = (await mailsTo(t, to)).filter((m) => !kind || m.kind === kind);
  const link = mails.at(-1)?.link;
  if (!link) throw new Error(`no ${kind ?? ''} mail to ${to}`);
  const token = new URL(link).searchParams.get('token');
  if (!token) throw new Error(`no token in ${link}`);
  return token;
}

export function code(res: LightMyRequestResponse): [number, string | undefined] {
  return [res.statusCode, res.statusCode >= 400 ? res.json().code : undefined];
}

/** The codes texted to `phone` so far, oldest first (the outbox drained first, read from the SMS sink or the dev inbox). */
export async function codesTo(t: TestServer, phone: string): Promise<string[]> {
  await t.auth.settled();
  await t.messaging.outbox.drain();
  const bodies = t.sms
    ? t.sms.received.filter((m) => m.to === phone).map((m) => m.body)
    : (await t.messaging.devInbox({ limit: 1000, offset: 0, to: phone })).reverse().map((m) => m.text);
  return bodies.map((b) => /\b(\d{6})\b/.exec(b)?.[1] ?? '');
}

/** The newest code texted to `phone`. */
export async function lastCode(t: TestServer, phone: string): Promise<string> {
  const code = (await codesTo(t, phone)).at(-1);
  if (!code) throw new Error(`no code texted to ${phone}`);
  return code;
}
