import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { authClient } from '../../../test/supabase-auth.js';
import { parseSupabaseConfig, projectSettingsOf } from '../../config/index.js';

// Auth hooks (docs/auth.md, "Auth hooks"): the custom access-token hook and the
// before-user-created hook as SQL functions, on /v1/auth and on /auth/v1 (auth-js).
const PASSWORD = 'correct horse battery';
let t: TestServer;

const FUNCTIONS = `
create function claims_hook(event jsonb) returns jsonb language plpgsql as $$
begin
  return jsonb_build_object('claims', (event->'claims') || jsonb_build_object(
    'user_role', 'editor', 'how', event->>'authentication_method', 'hooked_user', event->>'user_id'));
end $$;
create function throwing_hook(event jsonb) returns jsonb language plpgsql as $$
begin
  raise exception 'the hook broke';
end $$;
create function role_hook(event jsonb) returns jsonb language sql as $$
  select jsonb_build_object('claims', (event->'claims') || '{"role": "service"}'::jsonb) $$;
create function sub_hook(event jsonb) returns jsonb language sql as $$
  select jsonb_build_object('claims', (event->'claims') || jsonb_build_object('sub', gen_random_uuid()::text)) $$;
create function aal_hook(event jsonb) returns jsonb language sql as $$
  select jsonb_build_object('claims', (event->'claims') || '{"aal": "aal2"}'::jsonb) $$;
create function my_role() returns text language sql stable as $$ select auth.jwt()->>'user_role' $$;
grant execute on function my_role() to authenticated;
create function text_hook(event jsonb) returns text language sql as $$ select 'not json' $$;
create function no_claims_hook(event jsonb) returns jsonb language sql as $$ select '{"claim": 1}'::jsonb $$;
create function dropping_hook(event jsonb) returns jsonb language sql as $$
  select jsonb_build_object('claims', (event->'claims') - 'session_id' - 'is_anonymous' - 'role') $$;
create function suspend_hook(event jsonb) returns jsonb language sql as $$
  select '{"error": {"http_code": 403, "message": "This account is suspended"}}'::jsonb $$;
create function only_example_org(event jsonb) returns jsonb language plpgsql as $$
begin
  if event->'user'->>'email' like '%@blocked.test' then
    return jsonb_build_object('error', jsonb_build_object('http_code', 400, 'message', 'Sign-ups from blocked.test are closed'));
  end if;
  return '{}'::jsonb;
end $$;
`;

const uri = (fn: string) => `pg-functions://postgres/public/${fn}`;
const useHooks = (hooks: Record<string, string | null>) => setAuth(t, { hooks });

beforeAll(async () => {
  t = await createAuthServer();
  await t.sqlOk(FUNCTIONS);
});
afterAll(() => t?.stop());
afterEach(() => useHooks({ custom_access_token: null, before_user_created: null }));

/** GoTrue's password grant, raw: the status and `{code, message}` auth-js would read. */
function goTrueSignIn(addr: string) {
  return t.app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    headers: { ...t.as.anon, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
    payload: { email: addr, password: PASSWORD },
  });
}

async function openSessions(userEmail: string): Promise<number> {
  const rows = await t.sqlOk(
    `select count(*)::int as n from auth.sessions s join auth.users u on u.id = s.user_id where u.email = '${userEmail}' and s.revoked_at is null`,
  );
  return rows[0]!.rows[0]!.n as number;
}

describe('custom access-token hook', () => {
  it('adds its claims to every access token, on both faces, told how the token came about; the fixed claims stay', async () => {
    await useHooks({ custom_access_token: uri('claims_hook') });
    const ours = await call(t, 'POST', 'signup', { email: email('hook'), password: PASSWORD });
    expect(ours.statusCode, ours.body).toBe(200);
    const mine = decodeJwt(ours.json().session.access_token);
    expect(mine).toMatchObject({ user_role: 'editor', how: 'password', hooked_user: ours.json().user.id, role: 'authenticated' });
    expect(mine.sub).toBe(ours.json().user.id);
    expect(mine.aud).toBe('authenticated');

    const client = authClient(t);
    const { data, error } = await client.signUp({ email: email('hook-sb'), password: PASSWORD });
    expect(error).toBeNull();
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({ user_role: 'editor', how: 'password', sub: data.user!.id, aal: 'aal1', is_anonymous: false });
    const refreshed = await client.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(decodeJwt(refreshed.data.session!.access_token)).toMatchObject({ user_role: 'editor', how: 'token_refresh' });
    // Policies and functions read the claim: auth.jwt()->>'user_role'.
    const rpc = await t.app.inject({
      method: 'POST',
      url: '/api/v1/rpc/my_role',
      headers: { ...t.as.user(refreshed.data.session!.access_token), 'content-type': 'application/json' },
      payload: {},
    });
    expect([rpc.statusCode, rpc.json()]).toEqual([200, 'editor']);
  });

  it('attacker: a hook that throws refuses the sign-in (500 hook_failed; GoTrue’s unexpected_failure) and leaves no session open', async () => {
    const addr = email('throws');
    expect((await call(t, 'POST', 'signup', { email: addr, password: PASSWORD })).statusCode).toBe(200);
    await useHooks({ custom_access_token: uri('throwing_hook') });
    const before = await openSessions(addr);
    const ours = await call(t, 'POST', 'signin', { email: addr, password: PASSWORD });
    expect(code(ours)).toEqual([500, 'hook_failed']);
    expect(ours.json().message).toMatch(/custom access-token hook failed/);
    expect(ours.json().details).toEqual({ hook: 'custom_access_token' });
    // GoTrue's shape on /auth/v1 (auth-js reads a 500 as AuthRetryableFetchError with the message).
    const raw = await goTrueSignIn(addr);
    expect([raw.statusCode, raw.json().code]).toEqual([500, 'unexpected_failure']);
    expect(raw.json().message).toMatch(/custom access-token hook failed/);
    const sb = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect([sb.error?.status, sb.error?.message]).toEqual([500, expect.stringMatching(/hook failed/)]);
    expect(sb.data.session).toBeNull();
    expect(await openSessions(addr)).toBe(before);
  });

  it('a refresh while the hook throws is refused too, and works again once the hook is fixed', async () => {
    const client = authClient(t);
    const { error } = await client.signUp({ email: email('refresh'), password: PASSWORD });
    expect(error).toBeNull();
    const { data } = await client.getSession();
    await useHooks({ custom_access_token: uri('throwing_hook') });
    const res = await call(t, 'POST', 'refresh', { refresh_token: data.session!.refresh_token });
    expect(code(res)).toEqual([500, 'hook_failed']);
    await useHooks({ custom_access_token: uri('claims_hook') });
    const again = await call(t, 'POST', 'refresh', { refresh_token: data.session!.refresh_token });
    expect(again.statusCode, again.body).toBe(200);
    expect(decodeJwt(again.json().access_token).user_role).toBe('editor');
  });

  it('attacker: a hook that sets another role, changes sub or raises aal is refused, not signed', async () => {
    const addr = email('escalate');
    expect((await call(t, 'POST', 'signup', { email: addr, password: PASSWORD })).statusCode).toBe(200);
    for (const [fn, why] of [
      ['role_hook', /role must stay authenticated/],
      ['sub_hook', /may not change the sub claim/],
      ['aal_hook', /may not change the aal claim/],
    ] as const) {
      await useHooks({ custom_access_token: uri(fn) });
      const res = await call(t, 'POST', 'signin', { email: addr, password: PASSWORD });
      expect(code(res), fn).toEqual([500, 'hook_failed']);
      expect(res.json().message).toMatch(why);
      const raw = await goTrueSignIn(addr);
      expect([raw.statusCode, raw.json().code], fn).toEqual([500, 'unexpected_failure']);
      expect(raw.json().access_token).toBeUndefined();
    }
  });

  it('an answer that is not JSON or has no claims object is refused; dropped fixed claims are put back', async () => {
    const addr = email('shape');
    expect((await call(t, 'POST', 'signup', { email: addr, password: PASSWORD })).statusCode).toBe(200);
    for (const fn of ['text_hook', 'no_claims_hook']) {
      await useHooks({ custom_access_token: uri(fn) });
      expect(code(await call(t, 'POST', 'signin', { email: addr, password: PASSWORD })), fn).toEqual([500, 'hook_failed']);
    }
    await useHooks({ custom_access_token: uri('dropping_hook') });
    const res = await call(t, 'POST', 'signin', { email: addr, password: PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(decodeJwt(res.json().access_token)).toMatchObject({
      role: 'authenticated',
      is_anonymous: false,
      session_id: expect.any(String),
    });
  });

  it('a hook’s own error refuses with its status and message on both faces', async () => {
    const addr = email('suspended');
    expect((await call(t, 'POST', 'signup', { email: addr, password: PASSWORD })).statusCode).toBe(200);
    await useHooks({ custom_access_token: uri('suspend_hook') });
    const res = await call(t, 'POST', 'signin', { email: addr, password: PASSWORD });
    expect(code(res)).toEqual([403, 'hook_refused']);
    expect(res.json().message).toBe('This account is suspended');
    const sb = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect([sb.error?.status, sb.error?.message]).toEqual([403, 'This account is suspended']);
  });

  it('attacker: the hook function is not callable by anon or a user (closed like every new function)', async () => {
    const client = authClient(t);
    const { data } = await client.signUp({ email: email('caller'), password: PASSWORD });
    for (const headers of [t.as.anon, t.as.user(data.session!.access_token)]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/rpc/claims_hook',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: { event: { claims: { role: 'authenticated' } } },
      });
      expect(code(res)).toEqual([403, 'permission_denied']);
    }
    const priv = await t.sqlOk(`select has_function_privilege('anon', 'claims_hook(jsonb)', 'execute') as anon,
      has_function_privilege('authenticated', 'claims_hook(jsonb)', 'execute') as authenticated`);
    expect(priv[0]!.rows[0]).toEqual({ anon: false, authenticated: false });
  });
});

describe('before-user-created hook', () => {
  it('may refuse a sign-up with its own message (both faces), and lets the others through', async () => {
    await useHooks({ before_user_created: uri('only_example_org') });
    const blocked = email('x').replace('@example.com', '@blocked.test');
    const ours = await call(t, 'POST', 'signup', { email: blocked, password: PASSWORD });
    expect(code(ours)).toEqual([400, 'hook_refused']);
    expect(ours.json().message).toBe('Sign-ups from blocked.test are closed');
    const sb = await authClient(t).signUp({ email: blocked, password: PASSWORD });
    expect([sb.error?.status, sb.error?.message]).toEqual([400, 'Sign-ups from blocked.test are closed']);
    const rows = await t.sqlOk(`select count(*)::int as n from auth.users where email = '${blocked}'`);
    expect(rows[0]!.rows[0]!.n).toBe(0);
    const ok = await authClient(t).signUp({ email: email('fine'), password: PASSWORD });
    expect(ok.error).toBeNull();
  });

  it('attacker: a before-user-created hook that throws refuses the sign-up (hook_failed) and makes no user', async () => {
    await setAuth(t, { anonymous_sign_in_enabled: true });
    await useHooks({ before_user_created: uri('throwing_hook') });
    const addr = email('nobody');
    expect(code(await call(t, 'POST', 'signup', { email: addr, password: PASSWORD }))).toEqual([500, 'hook_failed']);
    const anon = await authClient(t).signInAnonymously();
    expect([anon.error?.status, anon.error?.message]).toEqual([500, expect.stringMatching(/before-user-created hook failed/)]);
    expect(anon.data.session).toBeNull();
    const rows = await t.sqlOk(`select count(*)::int as n from auth.users where email = '${addr}'`);
    expect(rows[0]!.rows[0]!.n).toBe(0);
    await setAuth(t, { anonymous_sign_in_enabled: false });
  });
});

describe('hook settings', () => {
  it('take pg-functions:// of the project’s schemas or function:<name> (send hooks: http(s) too); anything else is 400 invalid_settings', async () => {
    for (const bad of ['pg-functions://postgres/auth/anything', 'pg-functions://postgres/public/x;drop', 'https://example.com/hook', 42]) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: '/api/v1/settings/auth',
        headers: t.as.service,
        payload: { hooks: { custom_access_token: bad } },
      });
      expect(code(res), String(bad)).toEqual([400, 'invalid_settings']);
    }
    const unknown = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings/auth',
      headers: t.as.service,
      payload: { hooks: { mfa_verification_attempt: uri('x') } },
    });
    expect(code(unknown)).toEqual([400, 'invalid_settings']);
    // The send hooks may be http(s); their secrets must look like Standard Webhooks secrets.
    for (const hooks of [{ send_email_secrets: 'plain-password' }, { send_sms: 'ftp://example.com/x' }]) {
      const res = await t.app.inject({ method: 'PATCH', url: '/api/v1/settings/auth', headers: t.as.service, payload: { hooks } });
      expect(code(res), JSON.stringify(hooks)).toEqual([400, 'invalid_settings']);
    }
  });

  it('a Supabase folder’s enabled [auth.hook.*] hooks become the settings (http only for sending, with its secrets); others are named in the notes', () => {
    const s = parseSupabaseConfig(
      `[auth.hook.custom_access_token]
enabled = true
uri = "pg-functions://postgres/public/custom_access_token_hook"

[auth.hook.before_user_created]
enabled = false
uri = "pg-functions://postgres/public/before"

[auth.hook.send_email]
enabled = true
uri = "https://example.com/send"
secrets = "env(SEND_EMAIL_HOOK_SECRETS)"

[auth.hook.mfa_verification_attempt]
enabled = true
uri = "pg-functions://postgres/public/mfa"
`,
      'supabase/config.toml',
      '/tmp/supabase',
      { SEND_EMAIL_HOOK_SECRETS: 'v1,whsec_c2VuZC1ob29rLXNlY3JldC1mb3ItdGhlLXRlc3Rz' },
    );
    const { settings } = projectSettingsOf(s);
    expect(settings.auth?.hooks).toEqual({
      custom_access_token: 'pg-functions://postgres/public/custom_access_token_hook',
      before_user_created: null,
      send_email: 'https://example.com/send',
      send_email_secrets: 'v1,whsec_c2VuZC1ob29rLXNlY3JldC1mb3ItdGhlLXRlc3Rz',
    });
    expect(s.notActedOn).toContain('auth.hook.mfa_verification_attempt');
    expect(s.notActedOn).not.toContain('auth.hook.send_email');
  });
});
