import { AuthApiError } from '@supabase/auth-js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthServer, email, setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { authClient } from '../../../test/supabase-auth.js';
import { TestAuthenticator } from '../../../test/webauthn.js';

// WebAuthn second factors through auth-js's mfa API (GoTrue's `factor_type: 'webauthn'`), on
// Plinth's mfa service: the relying party is the project's, whatever rpId the client sends.
const PASSWORD = 'correct horse battery';
const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:5173';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { passkey_enabled: true, passkey_rp_id: RP_ID, passkey_origins: [ORIGIN] });
});
afterAll(() => t?.stop());

type Client = ReturnType<typeof authClient>;
/** WebAuthn options as auth-js hands them to the browser (bytes as ArrayBuffers). */
type PublicKeyOptions = { challenge: ArrayBuffer; rp?: { id?: string }; user?: { id: ArrayBuffer } };

function why(error: unknown) {
  expect(error).toBeInstanceOf(AuthApiError);
  return [(error as AuthApiError).status, (error as AuthApiError).code];
}

/** The credential JSON as a browser's PublicKeyCredential, which auth-js serialises with toJSON(). */
const asBrowser = <T extends object>(json: T) => ({ ...json, toJSON: () => json }) as never;

async function signedUp() {
  const c = authClient(t);
  const addr = email('wa');
  const { data, error } = await c.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  return { c, addr, user: data.user! };
}

/** A challenge through auth-js, with a client that names a hostile relying party (ignored). */
async function challenge(c: Client, factorId: string) {
  const out = await c.mfa.challenge({ factorId, webauthn: { rpId: 'evil.example', rpOrigins: ['https://evil.example'] } } as never);
  expect(out.error).toBeNull();
  const data = out.data as unknown as {
    id: string;
    type: string;
    webauthn: { type: 'create' | 'request'; credential_options: { publicKey: PublicKeyOptions } };
  };
  return { id: data.id, type: data.type, ceremony: data.webauthn.type, publicKey: data.webauthn.credential_options.publicKey };
}

const verify = (c: Client, factorId: string, challengeId: string, type: 'create' | 'request', credential: object) =>
  c.mfa.verify({
    factorId,
    challengeId,
    webauthn: { type, rpId: RP_ID, rpOrigins: [ORIGIN], credential_response: asBrowser(credential) },
  } as never);

/** A user with a verified WebAuthn factor, and the authenticator that holds it. */
async function withFactor() {
  const who = await signedUp();
  const enrolled = await who.c.mfa.enroll({ factorType: 'webauthn', friendlyName: 'YubiKey' } as never);
  expect(enrolled.error).toBeNull();
  const factorId = (enrolled.data as { id: string }).id;
  const key = new TestAuthenticator({ rpId: RP_ID, origin: ORIGIN });
  const ch = await challenge(who.c, factorId);
  expect((await verify(who.c, factorId, ch.id, 'create', key.create(ch.publicKey))).error).toBeNull();
  return { ...who, factorId, key };
}

describe('WebAuthn factors (auth.mfa, factor_type webauthn)', () => {
  it('enrol (an empty name allowed) → challenge with creation options for the project’s RP → verify with the new credential: aal2', async () => {
    const { c } = await signedUp();
    const enrolled = await c.mfa.enroll({ factorType: 'webauthn', friendlyName: '' } as never);
    expect(enrolled.error).toBeNull();
    const factorId = (enrolled.data as { id: string }).id;
    expect(enrolled.data).toEqual({ id: factorId, type: 'webauthn', friendly_name: '' });
    expect((await c.mfa.listFactors()).data?.all).toEqual([
      expect.objectContaining({ id: factorId, factor_type: 'webauthn', status: 'unverified' }),
    ]);
    const ch = await challenge(c, factorId);
    expect([ch.type, ch.ceremony]).toEqual(['webauthn', 'create']);
    expect(ch.publicKey.rp).toMatchObject({ id: RP_ID });
    const key = new TestAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const v = await verify(c, factorId, ch.id, 'create', key.create(ch.publicKey));
    expect(v.error).toBeNull();
    const claims = decodeJwt(v.data!.access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr).toEqual(expect.arrayContaining([expect.objectContaining({ method: 'webauthn' })]));
    expect((await c.mfa.listFactors()).data?.webauthn.map((f) => f.id)).toEqual([factorId]);
    expect((await c.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
  });

  it('a new sign-in is aal1 until the key signs a request challenge for its own credential; a replay, a phishing origin and a spent challenge are refused', async () => {
    const { addr, factorId, key } = await withFactor();
    const d = authClient(t);
    expect((await d.signInWithPassword({ email: addr, password: PASSWORD })).error).toBeNull();
    expect((await d.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    const phish = await challenge(d, factorId);
    expect(phish.ceremony).toBe('request');
    key.origin = 'https://evil.example';
    expect(why((await verify(d, factorId, phish.id, 'request', key.get(phish.publicKey))).error)).toEqual([
      400,
      'webauthn_verification_failed',
    ]);
    key.origin = ORIGIN;
    // The refused answer spent that challenge: the right answer to it is refused too.
    expect(why((await verify(d, factorId, phish.id, 'request', key.get(phish.publicKey))).error)).toEqual([422, 'mfa_verification_failed']);
    const ch = await challenge(d, factorId);
    const answer = key.get(ch.publicKey);
    const ok = await verify(d, factorId, ch.id, 'request', answer);
    expect(ok.error).toBeNull();
    expect(decodeJwt(ok.data!.access_token).aal).toBe('aal2');
    expect(why((await verify(d, factorId, ch.id, 'request', answer)).error)).toEqual([422, 'mfa_verification_failed']);
  });

  it('attacker: another user can neither challenge the factor nor use its owner’s challenge, which stays good for the owner', async () => {
    const { addr, factorId, key } = await withFactor();
    const alice = authClient(t);
    await alice.signInWithPassword({ email: addr, password: PASSWORD });
    const { c: mallory } = await signedUp();
    const refused = await mallory.mfa.challenge({ factorId });
    expect(why(refused.error)).toEqual([404, 'mfa_factor_not_found']);
    const ch = await challenge(alice, factorId);
    const answer = key.get(ch.publicKey);
    expect(why((await verify(mallory, factorId, ch.id, 'request', answer)).error)).toEqual([422, 'mfa_verification_failed']);
    expect((await mallory.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe('aal1');
    const ok = await verify(alice, factorId, ch.id, 'request', answer);
    expect(ok.error).toBeNull();
    expect(decodeJwt(ok.data!.access_token).sub).not.toBe(decodeJwt((await mallory.getSession()).data.session!.access_token).sub);
  });

  it('unenrol removes the factor; without a relying party (passkey_enabled off) enrolment is refused', async () => {
    const { c } = await signedUp();
    const enrolled = await c.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Key' } as never);
    const factorId = (enrolled.data as { id: string }).id;
    expect((await c.mfa.unenroll({ factorId })).error).toBeNull();
    expect((await c.mfa.listFactors()).data?.all.filter((f) => f.factor_type === 'webauthn')).toEqual([]);
    await setAuth(t, { passkey_enabled: false });
    try {
      const off = await c.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Key' } as never);
      expect(why(off.error)).toEqual([422, 'mfa_webauthn_enroll_not_enabled']);
    } finally {
      await setAuth(t, { passkey_enabled: true });
    }
  });
});
