import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso, isoSql } from '../src/lib/index.js';
import { asUser, call, email, lastCode, lastToken, setAuth } from './auth.js';
import { createTestServer, type TestServer } from './harness.js';
import { totpCode } from '../src/auth/mfa/totp.js';
import { startReceiver } from './receiver.js';
import { routesOf } from './scenarios.js';

// One wire format for time (lib/clock.ts, docs/api.md §1): every timestamp of Plinth's own that
// leaves the server is RFC 3339 UTC with milliseconds, `2026-11-24T21:43:45.978Z`. The test
// walks every JSON route of the server with data behind it, and checks each timestamp in each
// answer; a route the walk does not take must be listed below with the reason, so a new route
// cannot slip past it.

/** The wire format, written out here (not imported from the code it checks). */
const WIRE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Routes the walk does not take, and why (Fastify's own patterns). */
const NOT_WALKED: Record<string, string> = {
  'GET /': 'a redirect to the console',
  'GET /console': 'a redirect',
  'GET /console/*': 'the console: HTML and assets',
  'GET /sdk/plinth.js': 'JavaScript',
  'GET /metrics': 'Prometheus text',
  'GET /api/v1/openapi.json': 'the API description (no data)',
  'GET|POST|PATCH|DELETE|PUT /api/v1/db/*': "rows of the project's tables: sent as PostgreSQL writes them (docs/api.md §1)",
  'GET|POST|PATCH|DELETE|PUT /api/v1/rpc/*':
    "what the project's functions return: sent as PostgreSQL writes it, like rows (docs/api.md §1)",
  'POST /api/v1/sql': "the SQL runner's rows: as PostgreSQL writes them (docs/api.md §1)",
  'GET /api/v1/storage/object/:bucket/*': 'the bytes of an object',
  'GET /api/v1/storage/sign/:bucket/*': 'the bytes of an object',
  'GET /api/v1/storage/public/:bucket/*': 'the bytes of an object',
  'GET /v1/auth/oauth/:provider': 'a redirect to the provider',
  'GET|POST /v1/auth/oauth/:provider/callback': 'a redirect back to the app (the session in the fragment)',
  'GET /api/v1/backups/:name': 'the bytes of a backup (application/gzip)',
  'GET /v1/auth/passkeys':
    'a passkey to list needs a WebAuthn authenticator (passkeys-browser.test.ts, Chromium); created_at and last_used_at are written by isoSql (auth/passkeys/service.ts)',
  'POST /v1/auth/passkeys/register/options': 'WebAuthn options: a challenge and numbers, no timestamps',
  'POST /v1/auth/passkeys/signin/options': 'WebAuthn options: a challenge and numbers, no timestamps',
  'POST /v1/auth/passkeys/signup/options': 'WebAuthn options: a challenge and numbers, no timestamps',
  'POST /v1/auth/passkeys/register/verify':
    'needs a WebAuthn authenticator (passkeys-browser.test.ts drives it in Chromium); isoSql as the list',
  'POST /v1/auth/passkeys/signin/verify':
    "needs a WebAuthn authenticator (passkeys-browser.test.ts); its answer is sign-in's session, walked above",
  'POST /v1/auth/passkeys/signup/verify':
    "needs a WebAuthn authenticator (passkeys-browser.test.ts); its answer is sign-up's, walked above",
  'PATCH|DELETE /v1/auth/passkeys/:id': 'needs a registered passkey (passkeys-browser.test.ts); isoSql as the list',
  'DELETE /api/v1/users/:id/passkeys/:passkey': 'needs a registered passkey (passkeys-browser.test.ts); answers 204',
  'POST /api/v1/storage/upload/resumable': 'TUS: 201 with a Location header and no body (supabase/storage/resumable.test.ts)',
  'PATCH|DELETE /api/v1/storage/upload/resumable/:id': 'TUS: 204 with Upload-Offset, no body (supabase/storage/resumable.test.ts)',
  'GET|POST|PUT|PATCH|DELETE /api/v1/functions/:name':
    "what the project's own functions answer, as they write it (functions/functions.test.ts)",
  'GET|POST|PUT|PATCH|DELETE /api/v1/functions/:name/*': "what the project's own functions answer, as they write it",
  'GET /api/v1/realtime': "the WebSocket upgrade; its messages' commit_time is written by isoSql (realtime/log.ts)",
  'POST /api/v1/realtime/broadcast': 'answers {recipients} only (supabase/realtime/broadcast-http.test.ts); no timestamp',
  'POST /api/v1/settings/auth/oidc/:id/test': 'needs a live OpenID provider (auth/oauth/oidc.test.ts); no timestamps but expires_in',
  'GET /api/v1/settings/auth/oidc/:id/tests/:test_id':
    "needs a live OpenID provider (auth/oauth/oidc.test.ts); the provider's own claims are sent as received",
  'DELETE /v1/auth/identities/:provider':
    'answers the user as GET /v1/auth/user does (the same columns, walked there); needs a second identity (supabase/auth/identities.test.ts)',
  'GET /api/v1/admin/functions': "the project folder's functions: names, live versions, files and schedules, no timestamps",
  'PUT|DELETE /api/v1/admin/functions/:name':
    'needs a bundle made by the CLI (functions/deploy.test.ts); answers {name, version, sha256, started} or 204, no timestamps',
  'GET /api/v1/admin/functions/:name/versions':
    'needs a deployed bundle (functions/deploy.test.ts); created_at goes through toISOString, the wire format',
  'POST /api/v1/admin/functions/:name/rollback': 'needs deployed versions (functions/deploy.test.ts); answers {version, from}',
  'GET /api/v1/admin/functions/:name/calls':
    "needs a function in the project folder (functions/deploy.test.ts); each call's time is written by lib/clock.ts's iso",
  'GET /api/v1/admin/function-secrets': 'names and masked values, no timestamps',
  'PUT|DELETE /api/v1/admin/function-secrets/:name': 'answers 204 (functions/deploy.test.ts)',
  'GET /api/v1/admin/function-schedules':
    "needs a schedule in the project folder (functions/schedules-config.test.ts); its times are written by lib/clock.ts's iso",
};

/**
 * Supabase's faces (docs/supabase.md) answer in Supabase's formats, not Plinth's: rows as
 * PostgREST writes them, GoTrue's and Storage's fields as theirs. Each face's own tests check
 * its shapes with Supabase's clients (supabase/<face>/*.test.ts).
 */
const FACES = ['/rest/v1', '/auth/v1', '/storage/v1', '/realtime/v1', '/functions/v1'];
const isFace = (route: string) => FACES.some((p) => route.split(' ')[1].startsWith(p));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every timestamp-like string in an answer, with where it is: by its key (`…_at`, `…_until`) or its look. */
function timestamps(value: Json, where = ''): Array<[string, string]> {
  if (typeof value === 'string') {
    return /(_at|_until)$/.test(where) || /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value) ? [[where, value]] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => timestamps(v, `${where}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => timestamps(v, where ? `${where}.${k}` : k));
  return [];
}

describe('every timestamp leaving the server is RFC 3339 UTC with milliseconds', () => {
  let t: TestServer;
  const walked = new Map<string, number>();
  let cookie = '';

  /** Sends a request, checks every timestamp of its answer, and notes the route and how many it held. */
  async function walk(route: string, res: LightMyRequestResponse | Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    const r = await res;
    expect(r.statusCode, `${route}: ${r.body}`).toBeLessThan(300);
    const found = r.body ? timestamps(JSON.parse(r.body) as Json) : [];
    for (const [where, value] of found) expect(value, `${route} ${where}`).toMatch(WIRE_TIME);
    walked.set(route, (walked.get(route) ?? 0) + found.length);
    return r;
  }
  const as = (route: string, url: string, headers: Record<string, string>, payload?: unknown, contentType?: string) => {
    const method = route.split(' ')[0] as 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
    return walk(
      route,
      t.app.inject({
        method,
        url,
        headers: contentType ? { ...headers, 'content-type': contentType } : headers,
        ...(payload === undefined ? {} : { payload: payload as string }),
      }),
    );
  };
  const admin = () => ({ cookie: `plinth_admin=${cookie}`, 'x-plinth-admin': '1', origin: 'http://localhost:8080' });

  beforeAll(async () => {
    // No SMTP: emails and texts land in the dev inbox, which is walked too.
    // A webhook's receiver listens on the loopback: WEBHOOK_ALLOW_PRIVATE (docs/webhooks.md).
    t = await createTestServer({ SMS_PROVIDER: 'dev', AUTH_RATE_REQUESTS_IP: '100000/60', WEBHOOK_ALLOW_PRIVATE: 'true' });
    await t.settings.updateProject({ plan: 'pro' });
    await setAuth(t, {
      phone_enabled: true,
      require_email_confirmation: true,
      magic_link_enabled: true,
      allowed_redirect_urls: ['https://app.example.com/'],
      email_verification_url: 'https://app.example.com/verify',
      password_reset_url: 'https://app.example.com/reset',
      magic_link_url: 'https://app.example.com/magic',
    });
  });
  afterAll(() => t?.stop());

  it('end-user auth: every answer with a user or a session', async () => {
    const addr = email('time');
    const password = 'correct horse battery';
    await walk('POST /v1/auth/signup', call(t, 'POST', 'signup', { email: addr, password }));
    await walk('POST /v1/auth/verify-email', call(t, 'POST', 'verify-email', { token: await lastToken(t, addr, 'verification') }));
    const aMinuteLater = () => t.clock.advance(61_000); // emails to one address: one a minute
    aMinuteLater();
    await walk('POST /v1/auth/resend-verification', call(t, 'POST', 'resend-verification', { email: addr }));
    const session = (await walk('POST /v1/auth/signin', call(t, 'POST', 'signin', { email: addr, password }))).json();
    const me = asUser(t, session.access_token);
    await walk('GET /v1/auth/user', call(t, 'GET', 'user', undefined, me));
    await walk('PATCH /v1/auth/user', call(t, 'PATCH', 'user', { name: 'Ada' }, me));
    const next = (await walk('POST /v1/auth/refresh', call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).json();
    aMinuteLater();
    await walk('POST /v1/auth/reauthenticate', call(t, 'POST', 'reauthenticate', undefined, asUser(t, next.access_token)));
    aMinuteLater();
    await walk('POST /v1/auth/forgot-password', call(t, 'POST', 'forgot-password', { email: addr }));
    const reset = { token: await lastToken(t, addr, 'reset'), password: 'another horse battery' };
    await walk('POST /v1/auth/reset-password', call(t, 'POST', 'reset-password', reset));
    aMinuteLater();
    await walk('POST /v1/auth/request-magic-link', call(t, 'POST', 'request-magic-link', { email: addr }));
    const magic = await lastToken(t, addr, 'magic_link');
    const viaLink = (await walk('POST /v1/auth/signin-magic-link', call(t, 'POST', 'signin-magic-link', { token: magic }))).json();
    await walk('POST /v1/auth/signout', call(t, 'POST', 'signout', undefined, asUser(t, viaLink.access_token)));
    const phone = '+46701234567';
    await walk('POST /v1/auth/phone/send-otp', call(t, 'POST', 'phone/send-otp', { phone }));
    await walk('POST /v1/auth/phone/verify', call(t, 'POST', 'phone/verify', { phone, code: await lastCode(t, phone) }));
    await walk('GET /v1/auth/settings', call(t, 'GET', 'settings'));
    await walk('GET /health', t.app.inject({ url: '/health' }));
    await walk('GET /v1/auth/.well-known/jwks.json', t.app.inject({ url: '/v1/auth/.well-known/jwks.json' }));
    expect(walked.get('GET /v1/auth/user')).toBeGreaterThanOrEqual(4); // confirmed, created, updated, signed in, identity
  });

  it('the management API: admins, users, messages, settings', async () => {
    await as('POST /api/v1/admin/setup/check', '/api/v1/admin/setup/check', {}, { token: t.admin.setupToken });
    const setup = await as(
      'POST /api/v1/admin/setup',
      '/api/v1/admin/setup',
      {},
      {
        token: t.admin.setupToken,
        email: 'ops@example.com',
        password: 'a long admin passphrase',
      },
    );
    cookie = /plinth_admin=([^;]*)/.exec(String(setup.headers['set-cookie']))?.[1] ?? '';
    await as('POST /api/v1/admin/login', '/api/v1/admin/login', {}, { email: 'ops@example.com', password: 'a long admin passphrase' });
    await as('GET /api/v1/admin/me', '/api/v1/admin/me', admin());
    await as('GET /api/v1/admin/keys', '/api/v1/admin/keys', admin());
    const sk = t.as.service;
    const made = (await as('POST /api/v1/users', '/api/v1/users', sk, { email: email('made'), email_confirmed: true })).json();
    await as('PATCH /api/v1/users/:id', `/api/v1/users/${made.id}`, sk, { banned_until: '2030-01-02T03:04:05.678Z' });
    await as('GET /api/v1/users', '/api/v1/users', sk);
    await as('GET /api/v1/users/:id', `/api/v1/users/${made.id}`, sk);
    await as('POST /api/v1/users/:id/signout', `/api/v1/users/${made.id}/signout`, sk);
    const unconfirmed = (await as('POST /api/v1/users', '/api/v1/users', sk, { email: email('later') })).json();
    await as('POST /api/v1/users/:id/resend-verification', `/api/v1/users/${unconfirmed.id}/resend-verification`, sk);
    await as('DELETE /api/v1/users/:id', `/api/v1/users/${unconfirmed.id}`, sk);
    await as('POST /api/v1/email/test', '/api/v1/email/test', sk, { to: 'ops@example.com' });
    await t.messaging.outbox.drain();
    await as('GET /api/v1/messages', '/api/v1/messages', sk);
    await as('GET /api/v1/dev/inbox', '/api/v1/dev/inbox', sk);
    await as('POST /api/v1/email/preview', '/api/v1/email/preview', sk, { kind: 'verification' });
    await as('GET /api/v1/settings/auth', '/api/v1/settings/auth', sk);
    await as('PATCH /api/v1/settings/auth', '/api/v1/settings/auth', sk, { min_password_length: 8 });
    await as('GET /api/v1/project', '/api/v1/project', sk);
    await as('PATCH /api/v1/project', '/api/v1/project', sk, { name: 'Timely' });
    await as('GET /api/v1/email/templates/defaults', '/api/v1/email/templates/defaults', sk);
    const saved = (await as('POST /api/v1/sql/saved', '/api/v1/sql/saved', sk, { name: 'times', query: 'select now()' })).json();
    await as('GET /api/v1/sql/saved', '/api/v1/sql/saved', sk);
    await as('PATCH /api/v1/sql/saved/:id', `/api/v1/sql/saved/${saved.id}`, sk, { name: 'times, again' });
    await as('DELETE /api/v1/sql/saved/:id', `/api/v1/sql/saved/${saved.id}`, sk);
    expect((await t.sql('create table public.timely (id bigserial primary key, at timestamptz default now())')).statusCode).toBe(200);
    await as('PUT /api/v1/realtime/tables/:table', '/api/v1/realtime/tables/timely', sk);
    await as('GET /api/v1/realtime/tables', '/api/v1/realtime/tables', sk);
    await as('DELETE /api/v1/realtime/tables/:table', '/api/v1/realtime/tables/timely', sk);
    // The team (issue 19): invitations, roles, removal, the audit log, signing-key rotation.
    const invite = (await as('POST /api/v1/admin/invites', '/api/v1/admin/invites', sk, { email: email('dev'), role: 'viewer' })).json();
    await as('GET /api/v1/admin/invites', '/api/v1/admin/invites', sk);
    const token = new URL(invite.link).searchParams.get('token');
    const joined = (
      await as('POST /api/v1/admin/invites/accept', '/api/v1/admin/invites/accept', {}, { token, password: 'a long viewer passphrase' })
    ).json();
    await as('GET /api/v1/admin/admins', '/api/v1/admin/admins', sk);
    await as('PATCH /api/v1/admin/admins/:id', `/api/v1/admin/admins/${joined.admin.id}`, sk, { role: 'developer' });
    await as('DELETE /api/v1/admin/admins/:id', `/api/v1/admin/admins/${joined.admin.id}`, sk);
    const withdrawn = (await as('POST /api/v1/admin/invites', '/api/v1/admin/invites', sk, { email: email('gone'), role: 'admin' })).json();
    await as('DELETE /api/v1/admin/invites/:id', `/api/v1/admin/invites/${withdrawn.id}`, sk);
    await as('POST /api/v1/admin/signing-keys/rotate', '/api/v1/admin/signing-keys/rotate', sk, {});
    await as('POST /api/v1/admins', '/api/v1/admins', sk, { email: 'second@example.com', password: 'another long passphrase' });
    await as('POST /api/v1/admins/password', '/api/v1/admins/password', sk, {
      email: 'second@example.com',
      password: 'a third long passphrase',
    });
    if (t.config.databaseUrl) {
      // On PostgreSQL every backups route answers 409 backups_unavailable (pg_dump is the way:
      // admin/backups.ts): an error, which holds no timestamp.
      for (const route of ['POST /api/v1/backups', 'GET /api/v1/backups']) {
        const res = await t.app.inject({ method: route.split(' ')[0] as 'GET' | 'POST', url: '/api/v1/backups', headers: sk });
        expect(res.json().code, route).toBe('backups_unavailable');
        walked.set(route, 0);
      }
    } else {
      await as('POST /api/v1/backups', '/api/v1/backups', sk);
      await as('GET /api/v1/backups', '/api/v1/backups', sk);
    }
    await as('GET /api/v1/admin/audit', '/api/v1/admin/audit', sk);
    await as('POST /api/v1/admin/logout', '/api/v1/admin/logout', admin());
    for (const route of [
      'GET /api/v1/admin/admins',
      'GET /api/v1/admin/invites',
      'GET /api/v1/admin/audit',
      'POST /api/v1/admin/signing-keys/rotate',
      'GET /api/v1/users/:id',
      'GET /api/v1/messages',
      'GET /api/v1/dev/inbox',
      'POST /api/v1/admin/login',
      'GET /api/v1/sql/saved',
      ...(t.config.databaseUrl ? [] : ['POST /api/v1/backups', 'GET /api/v1/backups']),
    ]) {
      expect(walked.get(route), route).toBeGreaterThan(0);
    }
  });

  it('storage: buckets and objects', async () => {
    const sk = t.as.service;
    const b = '/api/v1/storage/buckets';
    await as(`POST ${b}`, b, sk, { name: 'times' });
    await as(`GET ${b}`, b, sk);
    await as(`GET ${b}/:name`, `${b}/times`, sk);
    await as(`PATCH ${b}/:name`, `${b}/times`, sk, { public: true });
    const o = '/api/v1/storage/object/:bucket';
    await as(`POST ${o}/*`, '/api/v1/storage/object/times/a/one.txt', sk, 'one', 'text/plain');
    await as(`PUT ${o}/*`, '/api/v1/storage/object/times/a/two.txt', sk, 'two', 'text/plain');
    await as(`GET ${o}`, '/api/v1/storage/object/times?prefix=a', sk);
    await as(`POST ${o}/move`, '/api/v1/storage/object/times/move', sk, { from: 'a/one.txt', to: 'a/uno.txt' });
    await as(`POST ${o}/copy`, '/api/v1/storage/object/times/copy', sk, { from: 'a/two.txt', to: 'a/dos.txt' });
    await as('POST /api/v1/storage/sign/:bucket/*', '/api/v1/storage/sign/times/a/dos.txt', sk, { expires_in: 60 });
    await as(`DELETE ${o}/*`, '/api/v1/storage/object/times/a/uno.txt', sk);
    await as(`DELETE ${o}`, '/api/v1/storage/object/times', sk, { paths: ['a/two.txt', 'a/dos.txt'] });
    await as(`DELETE ${b}/:name`, `${b}/times`, sk);
    for (const route of [`GET ${b}`, `GET ${o}`, `POST ${o}/move`, `DELETE ${o}`, `DELETE ${b}/:name`]) {
      expect(walked.get(route), route).toBeGreaterThan(0);
    }
  });

  it('second factors: enrol, challenge, verify, list, recovery codes, recover, remove; an operator lists and resets them', async () => {
    const addr = email('factors');
    const password = 'correct horse battery';
    await call(t, 'POST', 'signup', { email: addr, password });
    await call(t, 'POST', 'verify-email', { token: await lastToken(t, addr, 'verification') });
    const session = (await call(t, 'POST', 'signin', { email: addr, password })).json();
    const me = asUser(t, session.access_token);
    const enrol = (await walk('POST /v1/auth/factors', call(t, 'POST', 'factors', { factor_type: 'totp' }, me))).json();
    const challenge = (await walk('POST /v1/auth/factors/:id/challenge', call(t, 'POST', `factors/${enrol.id}/challenge`, {}, me))).json();
    const code = totpCode(enrol.totp.secret, t.clock.now());
    const up = (
      await walk(
        'POST /v1/auth/factors/:id/verify',
        call(t, 'POST', `factors/${enrol.id}/verify`, { challenge_id: challenge.id, code }, me),
      )
    ).json();
    const strong = asUser(t, up.access_token);
    await walk('GET /v1/auth/factors', call(t, 'GET', 'factors', undefined, strong));
    const codes = (await walk('POST /v1/auth/factors/recovery-codes', call(t, 'POST', 'factors/recovery-codes', {}, strong))).json();
    const again = (await call(t, 'POST', 'signin', { email: addr, password })).json();
    const recovered = await walk(
      'POST /v1/auth/factors/recover',
      call(t, 'POST', 'factors/recover', { code: codes.codes[0] }, asUser(t, again.access_token)),
    );
    const sk = t.as.service;
    await as('GET /api/v1/users/:id/factors', `/api/v1/users/${session.user.id}/factors`, sk);
    await as('DELETE /v1/auth/factors/:id', `/v1/auth/factors/${enrol.id}`, asUser(t, recovered.json().access_token));
    await as('DELETE /api/v1/users/:id/factors', `/api/v1/users/${session.user.id}/factors`, sk);
    for (const route of ['POST /v1/auth/factors', 'GET /v1/auth/factors', 'POST /v1/auth/factors/recover']) {
      expect(walked.get(route), route).toBeGreaterThan(0);
    }
  });

  it('database webhooks: the webhooks, their delivery log, and the commit_time of each POST', async () => {
    const sk = t.as.service;
    const r = await startReceiver();
    try {
      expect((await t.sql('create table public.hooked (id bigserial primary key, at timestamptz default now())')).statusCode).toBe(200);
      const w = '/api/v1/webhooks';
      const made = (await as(`POST ${w}`, w, sk, { name: 'times', table: 'hooked', url: `${r.url}/in` })).json();
      await as(`GET ${w}`, w, sk);
      await as(`GET ${w}/:id`, `${w}/${made.id}`, sk);
      await as(`PATCH ${w}/:id`, `${w}/${made.id}`, sk, { name: 'times, again' });
      // The old secret signs for 24 hours more: previous_secret_expires_at is a timestamp.
      await as(`POST ${w}/:id/secret/rotate`, `${w}/${made.id}/secret/rotate`, sk, {});
      expect((await t.sql('insert into public.hooked default values')).statusCode).toBe(200);
      const log = `${w}/${made.id}/deliveries`;
      const sent = async () => {
        t.webhooks.kick();
        const res = await t.app.inject({ url: log, headers: sk });
        return (res.json() as Array<{ id: string; status: string }>).find((d) => d.status === 'sent');
      };
      for (let i = 0; !(await sent()); i++) {
        if (i > 1200) throw new Error('no delivery sent within 30 s');
        await new Promise((done) => setTimeout(done, 25));
      }
      const delivery = (await sent()) as { id: string };
      await as(`GET ${w}/:id/deliveries`, log, sk);
      const detail = (await as(`GET ${w}/:id/deliveries/:delivery_id`, `${log}/${delivery.id}`, sk)).json();
      await as(`POST ${w}/:id/deliveries/:delivery_id/redeliver`, `${log}/${delivery.id}/redeliver`, sk, {});
      // The body a receiver gets holds Plinth's one timestamp, commit_time, in the same format.
      expect(JSON.parse(detail.body).commit_time).toMatch(WIRE_TIME);
      expect(r.accepted()[0]?.json.commit_time).toMatch(WIRE_TIME);
      await as(`DELETE ${w}/:id`, `${w}/${made.id}`, sk);
      for (const route of [`GET ${w}`, `GET ${w}/:id/deliveries`, `GET ${w}/:id/deliveries/:delivery_id`, `POST ${w}/:id/secret/rotate`]) {
        expect(walked.get(route), route).toBeGreaterThan(0);
      }
    } finally {
      await r.close();
    }
  });

  it("the two helpers write an instant alike, PostgreSQL's microseconds cut to milliseconds", async () => {
    for (const ms of [0, 1_795_556_625_978, Date.UTC(2026, 0, 2, 3, 4, 5, 6), Date.UTC(9999, 11, 31, 23, 59, 59, 999)]) {
      const { rows } = await t.db.query<{ t: string }>(`select ${isoSql('$1::timestamptz')} as t`, [iso(ms)]);
      expect(rows[0].t).toBe(iso(ms));
      expect(iso(ms)).toMatch(WIRE_TIME);
    }
    const { rows } = await t.db.query<{ t: string; none: string | null }>(
      `select ${isoSql("'2026-11-24 22:43:45.978999+01'::timestamptz")} as t, ${isoSql('null::timestamptz')} as none`,
    );
    expect(rows[0]).toEqual({ t: '2026-11-24T21:43:45.978Z', none: null });
  });

  it('the walk took every route of the server but those listed with a reason', () => {
    const skipped = new Set(
      Object.keys(NOT_WALKED).flatMap((k) => {
        const [methods, url] = k.split(' ');
        return methods.split('|').map((m) => `${m} ${url}`);
      }),
    );
    // On PostgreSQL the backups routes answer backups_unavailable only (walked on PGlite).
    if (t.db.kind !== 'pglite') for (const r of ['POST /api/v1/backups', 'GET /api/v1/backups']) skipped.add(r);
    const all = routesOf(t.app);
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter((r) => !walked.has(r) && !skipped.has(r) && !isFace(r))).toEqual([]);
    // And the list names no route the server does not have.
    expect([...skipped].filter((r) => !all.includes(r))).toEqual([]);
  });
});
