import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { email, mailsTo } from '../../../test/auth.js';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { type Receiver, startReceiver } from '../../../test/receiver.js';
import { authClient } from '../../../test/supabase-auth.js';

// The send-email and send-SMS hooks (docs/auth.md, "Auth hooks"): while one is set, Plinth sends
// nothing of that channel itself and hands GoTrue's payload to the hook: an http(s) URL signed the
// Standard Webhooks way (checked here by a real receiver with its own HMAC), or a SQL function.
// The receiver listens on the loopback: WEBHOOK_ALLOW_PRIVATE, the webhooks' escape hatch, lets
// the hook reach it; without it the same URL is refused.

const PASSWORD = 'correct horse battery';
const SITE = 'https://app.example.com/';
const APP = 'https://app.example.com/welcome';
const KEY = 'c2VuZC1ob29rLXNlY3JldC1mb3ItdGhlLXRlc3Rz'; // base64 of the HMAC key
const SECRET = `v1,whsec_${KEY}`;
const ENV = { AUTH_RATE_REQUESTS_IP: '100000/60', AUTH_RATE_SIGNIN_IP: '100000/900', AUTH_RATE_EMAIL_RECIPIENT: '100/60' };

let t: TestServer;
let receiver: Receiver;
const logs: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestServer({ ...ENV, WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info' }, { smtp: true, logs });
  await t.settings.updateAuth({ allowed_redirect_urls: [SITE, APP], require_email_confirmation: true, email_verification_url: APP });
  await t.sqlOk(`
    create table public.sent_mail (payload jsonb not null);
    create function public.mail_hook(event jsonb) returns jsonb language sql as $$
      insert into public.sent_mail values (event); select '{}'::jsonb $$;`);
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});
afterEach(async () => {
  receiver.answer = () => ({ status: 200, body: '{}' });
  await t.settings.updateAuth({ hooks: { send_email: null, send_sms: null, send_email_secrets: null, send_sms_secrets: null } });
});

const useEmailHook = () => t.settings.updateAuth({ hooks: { send_email: receiver.url, send_email_secrets: SECRET } });

/** GoTrue's send-hook payload (`email_data` for email, `sms` for SMS). */
interface HookPayload {
  user: Record<string, unknown> & { id: string | null; phone?: string };
  email_data: Record<string, string>;
  sms: { otp: string };
}

/** What the receiver checks: the Standard Webhooks signature over id, timestamp and the raw body. */
function verified(r: Receiver['received'][number]): HookPayload {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(KEY, 'base64')).update(`${id}.${ts}.${r.body}`).digest('base64');
  expect(String(r.headers['webhook-signature']).split(' ')).toContain(`v1,${expected}`);
  expect(Math.abs(Number(ts) - t.clock.now() / 1000)).toBeLessThan(300);
  return JSON.parse(r.body);
}

/**
 * A failed send as auth-js reports it: GoTrue's 502 is a retryable fetch error to auth-js (its
 * code dropped, its message kept); the raw answer carries `error_code` (checked once below).
 */
const sendFailed = (e: unknown) => ({
  name: (e as Error | null)?.name,
  status: (e as { status?: number })?.status,
  nothingSent: /nothing was sent/.test((e as Error | null)?.message ?? ''),
});
const SEND_FAILED = { name: 'AuthRetryableFetchError', status: 502, nothingSent: true };

describe('the send-email hook (http)', () => {
  it('gets GoTrue’s signed payload instead of the mail; its token_hash and token verify the address', async () => {
    await useEmailHook();
    const before = receiver.received.length;
    const addr = email('hooked');
    const client = authClient(t);
    const { error } = await client.signUp({ email: addr, password: PASSWORD, options: { emailRedirectTo: APP } });
    expect(error).toBeNull();
    expect(receiver.received.length).toBe(before + 1);
    const payload = verified(receiver.received[before]);
    expect(payload.user).toMatchObject({ email: addr, aud: 'authenticated', role: 'authenticated' });
    expect(payload.user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.email_data).toMatchObject({ email_action_type: 'signup', site_url: SITE, token_new: '', token_hash_new: '' });
    expect(payload.email_data.token).toMatch(/^\d{6}$/);
    expect(payload.email_data.redirect_to.startsWith(APP)).toBe(true);
    // Plinth sent no mail of its own.
    expect(await mailsTo(t, addr)).toEqual([]);
    const v = await client.verifyOtp({ token_hash: payload.email_data.token_hash, type: 'signup' });
    expect(v.error).toBeNull();
    expect(v.data.user?.email).toBe(addr);
  });

  it('a hook that fails (500, or its own refusal) fails the sign-up with a clear 5xx/4xx, not a bare 500, and keeps nothing', async () => {
    await useEmailHook();
    const client = authClient(t);
    const addr = email('down');
    receiver.answer = () => ({ status: 500, body: 'down' });
    const down = await client.signUp({ email: addr, password: PASSWORD, options: { emailRedirectTo: APP } });
    expect(sendFailed(down.error)).toEqual(SEND_FAILED);
    expect(down.error?.message).toMatch(/send-email hook failed.*nothing was sent/);
    const raw = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
      payload: { email: addr, password: PASSWORD },
    });
    expect([raw.statusCode, raw.json().code]).toEqual([502, 'email_send_failed']);
    expect((await t.db.query('select 1 from auth.users where email = $1', [addr])).rows).toHaveLength(0);

    receiver.answer = () => ({
      status: 400,
      body: JSON.stringify({ error: { http_code: 400, message: 'We do not mail that domain' } }),
    });
    const refused = await client.signUp({ email: addr, password: PASSWORD, options: { emailRedirectTo: APP } });
    expect([refused.error?.status, refused.error?.message]).toEqual([400, 'We do not mail that domain']);

    // Back up: the same sign-up goes through.
    receiver.answer = () => ({ status: 200, body: '{}' });
    expect((await client.signUp({ email: addr, password: PASSWORD, options: { emailRedirectTo: APP } })).error).toBeNull();
    // The secret is never logged, and reads back masked.
    expect(logs.some((l) => l.includes('send-email hook'))).toBe(true);
    expect(logs.join('\n')).not.toContain(KEY);
    const read = await t.app.inject({ url: '/api/v1/settings/auth', headers: t.as.service });
    expect(read.json().hooks).toMatchObject({ send_email: receiver.url, send_email_secrets: '********' });
    expect(read.body).not.toContain(KEY);
  });

  it('a URL hook without secrets is refused at use: nothing unsigned is sent', async () => {
    await t.settings.updateAuth({ hooks: { send_email: receiver.url, send_email_secrets: null } });
    const before = receiver.received.length;
    const { error } = await authClient(t).signUp({ email: email('unsigned'), password: PASSWORD, options: { emailRedirectTo: APP } });
    expect(sendFailed(error)).toEqual(SEND_FAILED);
    expect(receiver.received.length).toBe(before);
  });
});

describe('the send-email hook (SQL function)', () => {
  it('is given the payload in the request’s transaction', async () => {
    await t.settings.updateAuth({ hooks: { send_email: 'pg-functions://postgres/public/mail_hook' } });
    const addr = email('sql');
    expect((await authClient(t).signUp({ email: addr, password: PASSWORD, options: { emailRedirectTo: APP } })).error).toBeNull();
    const { rows } = await t.db.query<{ payload: HookPayload }>(
      "select payload from public.sent_mail where payload->'user'->>'email' = $1",
      [addr],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].payload.email_data.email_action_type).toBe('signup');
    expect(await mailsTo(t, addr)).toEqual([]);
  });
});

describe('the send-SMS hook (http)', () => {
  it('sends the phone code on a server with no SMS provider; the code signs in', async () => {
    await t.settings.updateProject({ plan: 'pro' });
    await t.settings.updateAuth({ phone_enabled: true, hooks: { send_sms: receiver.url, send_sms_secrets: SECRET } });
    const before = receiver.received.length;
    const client = authClient(t);
    const phone = '+46701234567';
    const { error } = await client.signInWithOtp({ phone });
    expect(error).toBeNull();
    const payload = verified(receiver.received[before]);
    expect(payload.user.phone).toBe(phone);
    expect(payload.sms.otp).toMatch(/^\d{6}$/);
    const v = await client.verifyOtp({ phone, token: payload.sms.otp, type: 'sms' });
    expect(v.error).toBeNull();
    expect(v.data.user?.phone).toBe(phone);
  });
});

describe('an http hook reaches what a webhook may', () => {
  it('without WEBHOOK_ALLOW_PRIVATE a loopback URL is refused: 502, nothing sent', async () => {
    const strict = await createTestServer(ENV, { smtp: true });
    try {
      await strict.settings.updateAuth({
        allowed_redirect_urls: [SITE, APP],
        require_email_confirmation: true,
        email_verification_url: APP,
        hooks: { send_email: receiver.url, send_email_secrets: SECRET },
      });
      const before = receiver.received.length;
      const { error } = await authClient(strict).signUp({ email: email('ssrf'), password: PASSWORD, options: { emailRedirectTo: APP } });
      expect(sendFailed(error)).toEqual(SEND_FAILED);
      expect(receiver.received.length).toBe(before);
    } finally {
      await strict.stop();
    }
  });
});
