import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../server/src/auth/mfa/totp.js';
import { clientOf, type E2eServer, email, startServer } from './server.js';

// Issue 27, SDK: auth.mfa.* from Node against the real server (PGlite or PostgreSQL).

let s: E2eServer;
beforeAll(async () => {
  s = await startServer({ passkey_enabled: true });
  const res = await s.t.sql(`
    create table notes (id bigserial primary key, body text not null, user_id uuid default auth.uid());
    create policy own on notes using (user_id = auth.uid()) with check (user_id = auth.uid());`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => s?.t.stop());

const PASSWORD = 'correct horse battery';
const code = (secret: string) => totpCode(secret, s.t.clock.now());
/** The next 30-second step: a code of the step already used is refused (each code works once). */
const nextStep = () => s.t.clock.advance(30_000 - (s.t.clock.now() % 30_000) + 1);

describe('auth.mfa', () => {
  it('enroll, challengeAndVerify, listFactors, assurance levels, recovery, unenroll', async () => {
    const addr = email('sdk-mfa');
    const owner = clientOf(s);
    const events: string[] = [];
    owner.auth.onAuthStateChange((event) => void events.push(event));
    expect((await owner.auth.signUp({ email: addr, password: PASSWORD })).error).toBeNull();
    expect((await owner.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });

    const { data: factor } = await owner.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' });
    expect(factor?.totp.qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    const verified = await owner.auth.mfa.challengeAndVerify({ factorId: factor?.id as string, code: code(factor?.totp.secret as string) });
    expect(verified.error).toBeNull();
    const level = (await owner.auth.mfa.getAuthenticatorAssuranceLevel()).data;
    expect(level).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
    expect(level?.currentAuthenticationMethods.map((m) => m.method)).toEqual(['password', 'totp']);
    await expect.poll(() => events).toContain('MFA_CHALLENGE_VERIFIED');
    expect((await owner.auth.mfa.listFactors()).data?.totp).toEqual([expect.objectContaining({ id: factor?.id, friendly_name: 'Phone' })]);
    const { data: recovery } = await owner.auth.mfa.generateRecoveryCodes();
    expect(recovery?.codes).toHaveLength(10);

    // Another device signs in with the password: aal1, refused until it steps up.
    const other = clientOf(s);
    const signedIn = await other.auth.signIn({ email: addr, password: PASSWORD });
    expect(signedIn.data?.session.next_aal).toBe('aal2');
    expect((await other.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    expect((await other.from('notes').select('*')).error).toMatchObject({ code: 'mfa_required', status: 403 });
    expect((await other.auth.mfa.recover({ code: recovery?.codes[0] as string })).error).toBeNull();
    expect((await other.from('notes').select('*')).error).toBeNull();

    // The last factor removed: this session is aal1 again and so is what the user can reach.
    nextStep();
    expect((await owner.auth.mfa.unenroll({ factorId: factor?.id as string })).error).toBeNull();
    expect((await owner.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });
    expect((await owner.auth.mfa.listFactors()).data?.all).toEqual([]);
    owner.auth.dispose();
    other.auth.dispose();
  });

  it('passkeys need a browser: in Node the SDK says so', async () => {
    const c = clientOf(s);
    const res = await c.auth.signInWithPasskey();
    expect(res.error).toMatchObject({ code: 'webauthn_unavailable', status: 0 });
    c.auth.dispose();
  });
});
