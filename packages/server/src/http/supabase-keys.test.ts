import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JWK, SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSupabaseConfig, SUPABASE_LOCAL_JWT_SECRET } from '../config/index.js';
import { createPrincipalResolver, type Principal } from './principal.js';
import {
  createSupabaseKeys,
  isLoopbackHost,
  SUPABASE_LOCAL_PUBLISHABLE_KEY,
  SUPABASE_LOCAL_SECRET_KEY,
  supabaseKeysOf,
} from './supabase-keys.js';

// A Supabase folder's keys (issue 33): the anon/service_role JWTs Supabase's clients hard-code,
// user tokens signed with the folder's secret or signing keys, the publishable/secret keys, and
// a request with no key as anon only on a folder served on loopback. Plinth's own keys and
// tokens keep working beside them.
const PLINTH = { publicKey: 'pk_test_public', secretKey: 'sk_test_secret' };
// The keys in Supabase's client test suites and docs, as `supabase status` prints them.
const DEMO_ANON =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';
const DEMO_SERVICE =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';
const USER = '317eadce-631a-4429-a0bb-f19a7a517b4a';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A Plinth token verifier that knows one token. */
const plinthVerify = async (token: string) => {
  if (token !== 'eyPlinthUserToken') throw Object.assign(new Error('bad'), { code: 'invalid_token' });
  const payload = { sub: USER, role: 'authenticated' };
  return { payload, json: JSON.stringify(payload) };
};

function folderSettings(toml = '') {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-sbkeys-'));
  dirs.push(dir);
  return { dir, settings: parseSupabaseConfig(toml, join(dir, 'config.toml'), dir, {}) };
}

function resolver(toml = '', host = '127.0.0.1') {
  const { settings } = folderSettings(toml);
  const sb = createSupabaseKeys(settings, host);
  return createPrincipalResolver(PLINTH, plinthVerify, sb ?? undefined);
}

const hs = (claims: Record<string, unknown>, secret = SUPABASE_LOCAL_JWT_SECRET) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setExpirationTime('1h').sign(new TextEncoder().encode(secret));
const role = (p: Principal) => p.role;
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = (await p.then(
    () => null,
    (e) => e,
  )) as { code?: string } | null;
  if (!err) throw new Error('accepted');
  return err.code ?? String(err);
}

describe("a Supabase folder's keys", () => {
  it('derives byte for byte the anon and service_role keys of the Supabase CLI from its local secret', async () => {
    expect(await supabaseKeysOf(SUPABASE_LOCAL_JWT_SECRET)).toEqual({ anon: DEMO_ANON, service_role: DEMO_SERVICE });
  });

  it('takes the anon key as anon and the service_role key as the service, in apikey or as Bearer', async () => {
    const who = resolver();
    expect(role(await who(DEMO_ANON, undefined))).toBe('anon');
    expect(role(await who(DEMO_ANON, `Bearer ${DEMO_ANON}`))).toBe('anon');
    expect(role(await who(DEMO_SERVICE, undefined))).toBe('service');
    expect(role(await who(undefined, `Bearer ${DEMO_SERVICE}`))).toBe('service');
    expect(role(await who(DEMO_ANON, `Bearer ${DEMO_SERVICE}`))).toBe('service');
    // The publishable and secret keys of the CLI, and Plinth's own keys, beside them.
    expect(role(await who(SUPABASE_LOCAL_PUBLISHABLE_KEY, undefined))).toBe('anon');
    expect(role(await who(SUPABASE_LOCAL_PUBLISHABLE_KEY, `Bearer ${SUPABASE_LOCAL_SECRET_KEY}`))).toBe('service');
    expect(role(await who(PLINTH.publicKey, undefined))).toBe('anon');
    expect(role(await who(undefined, `Bearer ${PLINTH.secretKey}`))).toBe('service');
  });

  it("takes a user token signed with the folder's secret, and Plinth's own token with the anon key", async () => {
    const who = resolver();
    const token = await hs({ sub: USER, role: 'authenticated', email: 'ada@example.com' });
    const user = await who(DEMO_ANON, `Bearer ${token}`);
    expect(user).toMatchObject({ role: 'authenticated', uid: USER });
    expect(JSON.parse(user.claims)).toMatchObject({ email: 'ada@example.com' });
    expect(await who(DEMO_ANON, 'Bearer eyPlinthUserToken')).toMatchObject({ role: 'authenticated', uid: USER });
  });

  it('verifies RS256 keys and tokens with the signing keys of signing_keys_path (as auth-js mints them)', async () => {
    const { dir } = folderSettings();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: 'k1', alg: 'RS256', key_ops: ['sign', 'verify'] };
    writeFileSync(join(dir, 'signing_keys.json'), JSON.stringify([jwk]));
    const settings = parseSupabaseConfig('[auth]\nsigning_keys_path = "./signing_keys.json"\n', join(dir, 'config.toml'), dir, {});
    const who = createPrincipalResolver(PLINTH, plinthVerify, createSupabaseKeys(settings, '127.0.0.1') ?? undefined);
    const rs = (claims: Record<string, unknown>, kid = 'k1') =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
    const publishable = await rs({ iss: 'supabase-demo', role: 'anon', exp: 1983812996 });
    const secret = await rs({ iss: 'supabase-demo', role: 'service_role', exp: 1983812996 });
    expect(role(await who(publishable, undefined))).toBe('anon');
    expect(role(await who(secret, undefined))).toBe('service');
    expect(await who(publishable, `Bearer ${await rs({ sub: USER, role: 'authenticated' })}`)).toMatchObject({ uid: USER });
    // Another RSA key claiming the folder's kid is refused.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await new SignJWT({ role: 'service_role' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(other);
    expect(await refusal(who(forged, undefined))).toBe('invalid_token');
  });

  it('attacker: a service_role token signed with another secret, alg none, an expired key and a role it does not serve are refused', async () => {
    const who = resolver();
    const forged = await hs({ role: 'service_role' }, 'another-secret-of-at-least-thirty-two-characters');
    expect(await refusal(who(forged, undefined))).toBe('invalid_token');
    expect(await refusal(who(DEMO_ANON, `Bearer ${forged}`))).toBe('invalid_token');
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: 'supabase-demo', role: 'service_role', exp: 1983812996 })}.`;
    expect(await refusal(who(none, undefined))).toBe('unauthorized');
    expect(await refusal(who(DEMO_ANON, `Bearer ${none}`))).not.toBe('accepted');
    const expired = await new SignJWT({ role: 'service_role', exp: 1000 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SUPABASE_LOCAL_JWT_SECRET));
    expect(await refusal(who(expired, undefined))).toBe('token_expired');
    expect(await refusal(who(await hs({ role: 'postgres' }), undefined))).toBe('invalid_token');
    // A look-alike of the CLI's secret key is no key.
    expect(await refusal(who(`${SUPABASE_LOCAL_SECRET_KEY}x`, undefined))).toBe('unauthorized');
  });

  it('a request with no key is anon only on a Supabase folder served on loopback', async () => {
    expect(role(await resolver('', '127.0.0.1')(undefined, undefined))).toBe('anon');
    expect(role(await resolver('', '::1')(undefined, undefined))).toBe('anon');
    expect(await refusal(resolver('', '0.0.0.0')(undefined, undefined))).toBe('unauthorized');
    expect(await refusal(resolver('', '192.168.1.10')(undefined, undefined))).toBe('unauthorized');
    // A plinth.json project (no Supabase folder): refused, on loopback too.
    expect(createSupabaseKeys(undefined, '127.0.0.1')).toBeNull();
    expect(await refusal(createPrincipalResolver(PLINTH, plinthVerify)(undefined, undefined))).toBe('unauthorized');
    expect(isLoopbackHost('127.0.0.1') && isLoopbackHost('localhost') && !isLoopbackHost('0.0.0.0')).toBe(true);
  });

  it("off loopback the CLI's public defaults sign nothing; a folder's own secret still works", async () => {
    const wide = resolver('', '0.0.0.0');
    expect(await refusal(wide(DEMO_SERVICE, undefined))).toBe('invalid_token');
    expect(await refusal(wide(SUPABASE_LOCAL_SECRET_KEY, undefined))).toBe('unauthorized');
    const secret = 'a-project-secret-of-at-least-thirty-two-characters';
    const own = resolver(`[auth]\njwt_secret = "${secret}"\n`, '0.0.0.0');
    const keys = await supabaseKeysOf(secret);
    expect(role(await own(keys.service_role, undefined))).toBe('service');
    expect(await refusal(own(DEMO_SERVICE, undefined))).toBe('invalid_token');
  });
});
