/**
 * The keys of a Supabase CLI project folder, as `supabase status` prints them and Supabase's
 * clients send them (docs/supabase.md "Project folders"): the anon and service_role JWTs, HS256
 * with the folder's JWT secret (`[auth] jwt_secret`, else the CLI's local default) or RS256/ES256
 * with the keys of `[auth] signing_keys_path`; user tokens signed the same way; the publishable
 * and secret keys. The Supabase CLI's local defaults (that secret, the demo keys, the fixed
 * `sb_` keys) are public: they are accepted only while the folder is served on a loopback address.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createLocalJWKSet, decodeProtectedHeader, type JWK, jwtVerify, SignJWT } from 'jose';
import { SUPABASE_LOCAL_JWT_SECRET, type SupabaseSettings } from '../config/index.js';
import { isUuid } from '../lib/index.js';
import { ApiError } from './errors.js';
import type { Principal, SupabaseKeys } from './principal.js';

/** The Supabase CLI's fixed local keys (`supabase status`: Publishable key, Secret key). */
export const SUPABASE_LOCAL_PUBLISHABLE_KEY = 'sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH';
export const SUPABASE_LOCAL_SECRET_KEY = 'sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz';
/** The `exp` of the CLI's demo keys (2032-11-12), kept so they are byte for byte the CLI's. */
const DEMO_EXP = 1983812996;

/** 127.0.0.0/8, ::1, localhost: where only this machine can call. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** The public part of a JWK (a signing_keys.json entry holds the private key). */
function publicJwk(k: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, key_ops: _ops, ...pub } = k as JWK & { oth?: unknown };
  return pub;
}

/** The folder's signing keys (an array of JWKs, or `{keys: […]}`), public parts; [] when there is no file. */
export function readSigningKeys(path: string | null): JWK[] {
  if (!path || !existsSync(path)) return [];
  const raw = JSON.parse(readFileSync(path, 'utf8')) as JWK[] | { keys: JWK[] };
  const list = Array.isArray(raw) ? raw : raw.keys;
  return (list ?? []).filter((k) => k && (k.kty === 'RSA' || k.kty === 'EC')).map(publicJwk);
}

/** The anon and service_role keys `supabase status` prints for a JWT secret (HS256, iss supabase-demo). */
export async function supabaseKeysOf(jwtSecret: string): Promise<{ anon: string; service_role: string }> {
  const sign = (role: string) =>
    new SignJWT({ iss: 'supabase-demo', role, exp: DEMO_EXP })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(jwtSecret));
  return { anon: await sign('anon'), service_role: await sign('service_role') };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The folder's key resolver for createPrincipalResolver, or null when the project is not a
 * Supabase folder.
 * @example createSupabaseKeys(config.project?.supabase?.settings, config.host)
 */
export function createSupabaseKeys(settings: SupabaseSettings | undefined, host: string): SupabaseKeys | null {
  if (!settings) return null;
  const local = isLoopbackHost(host);
  const secret = settings.auth.jwt_secret;
  // The CLI's default secret is in every Supabase checkout: off a loopback address it signs nothing.
  const hsKey = secret !== SUPABASE_LOCAL_JWT_SECRET || local ? new TextEncoder().encode(secret) : null;
  const jwks = readSigningKeys(settings.auth.signing_keys_path);
  const kids = new Set(jwks.map((k) => k.kid).filter(Boolean));
  const keySet = jwks.length ? createLocalJWKSet({ keys: jwks }) : null;
  const publishable = local ? digest(SUPABASE_LOCAL_PUBLISHABLE_KEY) : null;
  const secretKey = local ? digest(SUPABASE_LOCAL_SECRET_KEY) : null;
  const anon: Principal = { role: 'anon', claims: '{"role":"anon"}', uid: null };
  const service: Principal = { role: 'service', claims: '{"role":"service_role"}', uid: null };
  const invalid = () => new ApiError('invalid_token', 'The token is not signed by a key of this project.');

  return {
    noKeyIsAnon: local,
    async resolve(value) {
      if (value.startsWith('sb_')) {
        const d = digest(value);
        if (secretKey && timingSafeEqual(d, secretKey)) return service;
        if (publishable && timingSafeEqual(d, publishable)) return anon;
        return null;
      }
      if (!value.startsWith('ey')) return null;
      let header: { alg?: string; kid?: string };
      try {
        header = decodeProtectedHeader(value);
      } catch {
        return null;
      }
      // Plinth's own tokens are ES256 with its kids; HS256 or a folder kid is the folder's.
      const isHs = header.alg === 'HS256';
      const isFolderKid = header.kid !== undefined && kids.has(header.kid);
      if (!isHs && !isFolderKid) return null;
      let payload: Record<string, unknown>;
      try {
        if (isHs) {
          if (!hsKey) throw invalid();
          payload = (await jwtVerify(value, hsKey, { algorithms: ['HS256'] })).payload;
        } else {
          if (!keySet) throw invalid();
          payload = (await jwtVerify(value, keySet, { algorithms: ['RS256', 'ES256'] })).payload;
        }
      } catch (err) {
        if (err instanceof ApiError) throw err;
        const expired = (err as { code?: string }).code === 'ERR_JWT_EXPIRED';
        throw expired ? new ApiError('token_expired', 'The token has expired.') : invalid();
      }
      const json = JSON.stringify(payload);
      if (payload.role === 'service_role' || payload.role === 'supabase_admin') return { ...service, claims: json };
      if (payload.role === 'anon') return { ...anon, claims: json };
      if (payload.role === 'authenticated' && typeof payload.sub === 'string')
        return {
          role: 'authenticated',
          claims: json,
          sub: payload.sub,
          uid: isUuid(payload.sub) ? payload.sub : null,
          sessionId: typeof payload.session_id === 'string' ? payload.session_id : null,
          payload,
          stepUp: false,
        };
      throw new ApiError('invalid_token', 'The token has no role this project serves (anon, authenticated, service_role).');
    },
  };
}
