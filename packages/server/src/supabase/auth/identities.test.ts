import type { UserIdentity } from '@supabase/auth-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { code, createAuthServer, email } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { functionsServer } from '../../../test/functions.js';
import { authClient } from '../../../test/supabase-auth.js';

// Unlinking identities: auth-js's unlinkIdentity on /auth/v1 and DELETE /v1/auth/identities/{provider}.
const PASSWORD = 'correct horse battery';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
});
afterAll(() => t?.stop());

async function signedUp() {
  const client = authClient(t);
  const addr = email('ident');
  const { data, error } = await client.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  return { client, addr, user: data.user!, session: data.session! };
}

/** A provider account linked to the user, as the OAuth callback links one. */
async function linkGithub(userId: string) {
  await t.db.query(
    `insert into auth.identities (user_id, provider, provider_user_id, email, created_at) values ($1, 'github', $2, null, now())`,
    [userId, `gh-${userId}`],
  );
}

const del = (path: string, token: string, payload?: object) =>
  t.app.inject({
    method: 'DELETE',
    url: path,
    headers: { ...t.as.user(token), ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload } : {}),
  });

describe('unlinkIdentity on /auth/v1', () => {
  it('refuses the only identity with 422 single_identity_not_deletable', async () => {
    const { client } = await signedUp();
    const { data } = await client.getUserIdentities();
    expect(data!.identities).toHaveLength(1);
    const res = await client.unlinkIdentity(data!.identities[0] as UserIdentity);
    expect([res.error?.status, (res.error as { code?: string })?.code]).toEqual([422, 'single_identity_not_deletable']);
  });

  it('unlinks a provider identity; the user and the next token no longer list it', async () => {
    const { client, user } = await signedUp();
    await linkGithub(user.id);
    const { data } = await client.getUserIdentities();
    expect(data!.identities.map((i) => i.provider).sort()).toEqual(['email', 'github']);
    const github = data!.identities.find((i) => i.provider === 'github')!;
    const res = await client.unlinkIdentity(github as UserIdentity);
    expect(res.error).toBeNull();
    const after = await client.getUser();
    expect(after.data.user?.identities?.map((i) => i.provider)).toEqual(['email']);
    const refreshed = await client.refreshSession();
    expect(refreshed.data.user?.app_metadata.providers).toEqual(['email']);
  });

  it('attacker: another user’s identity id is 422 identity_not_found and stays linked', async () => {
    const victim = await signedUp();
    await linkGithub(victim.user.id);
    const victimGithub = (await victim.client.getUserIdentities()).data!.identities.find((i) => i.provider === 'github')!;
    const { client } = await signedUp();
    const res = await client.unlinkIdentity(victimGithub as UserIdentity);
    expect([res.error?.status, (res.error as { code?: string })?.code]).toEqual([422, 'identity_not_found']);
    expect((await victim.client.getUserIdentities()).data!.identities).toHaveLength(2);
  });
});

describe('DELETE /v1/auth/identities/{provider}', () => {
  it('404 identity_not_found, 409 last_identity, and after the reauthentication window 403 reauthentication_required unless the password is sent', async () => {
    const { user, session } = await signedUp();
    expect(code(await del('/v1/auth/identities/github', session.access_token))).toEqual([404, 'identity_not_found']);
    expect(code(await del('/v1/auth/identities/email', session.access_token))).toEqual([409, 'last_identity']);
    await linkGithub(user.id);
    t.clock.advance(11 * 60_000);
    expect(code(await del('/v1/auth/identities/github', session.access_token))).toEqual([403, 'reauthentication_required']);
    const ok = await del('/v1/auth/identities/github', session.access_token, { current_password: PASSWORD });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().identities.map((i: { provider: string }) => i.provider)).toEqual(['email']);
  });

  it('unlinking the email identity removes the address and ends the sessions; the other sign-in remains', async () => {
    const { user, session } = await signedUp();
    await linkGithub(user.id);
    const res = await del('/v1/auth/identities/email', session.access_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ email: null, identities: [{ provider: 'github' }] });
    const me = await t.app.inject({ url: '/v1/auth/user', headers: t.as.user(session.access_token) });
    expect(code(me)).toEqual([401, 'invalid_token']);
  });
});

// A Supabase folder serves unlinkIdentity as its config.toml says, as GoTrue does: `[auth]
// enable_manual_linking` is false by default, and unlinking is then "Manual linking is disabled"
// (auth-js's own suite runs on such a folder).
describe('a Supabase folder: unlinking follows [auth] enable_manual_linking', () => {
  const unlink = async (toml: string) => {
    const s = await functionsServer({ 'supabase/config.toml': toml }, { supabase: true, env: { NO_LOG_CAPTURE: '1' } });
    try {
      const uid = '00000000-0000-4000-8000-0000000000c3';
      const res = await s.app.inject({
        method: 'DELETE',
        url: `/auth/v1/user/identities/google:${uid}`,
        headers: s.user(await s.mintToken(uid)),
      });
      return { status: res.statusCode, code: res.json().error_code, msg: res.json().msg };
    } finally {
      await s.stop();
    }
  };

  it('off by default: 404 manual_linking_disabled, nothing looked at', async () => {
    expect(await unlink('project_id = "linking"\n')).toEqual({
      status: 404,
      code: 'manual_linking_disabled',
      msg: 'Manual linking is disabled',
    });
  });

  it('on: the unlink is served (here an identity the user lacks)', async () => {
    expect(await unlink('project_id = "linking"\n[auth]\nenable_manual_linking = true\n')).toMatchObject({
      status: 422,
      code: 'identity_not_found',
    });
  });
});
