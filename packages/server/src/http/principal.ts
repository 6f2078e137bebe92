import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors.js';
import { isUuid } from '../lib/index.js';

/** Who is calling (docs/api.md §1, keys and roles). `claims` is the JSON text the SQL sees as `auth.jwt()`. */
export type Principal =
  | { role: 'service'; claims: string; uid: null }
  | { role: 'anon'; claims: string; uid: null }
  | {
      role: 'authenticated';
      claims: string;
      sub: string;
      /** `sub` when it is a uuid (what `auth.uid()` returns), else null. */
      uid: string | null;
      sessionId: string | null;
      payload: Record<string, unknown>;
      /**
       * The user has a verified second factor and this token is `aal1` (auth setting
       * `mfa_enforcement: "server"`): refused with 403 `mfa_required` everywhere but where a
       * caller asks with `{ aal1: true }` (the auth routes that step up).
       */
      stepUp: boolean;
    };

export interface VerifiedToken {
  payload: Record<string, unknown>;
  /** JSON of the payload, computed once per token. */
  json: string;
  /** The token's user must verify a second factor before this token is accepted (Principal's `stepUp`). */
  stepUp?: boolean;
}

/** 403 for an `aal1` token of a user with a verified second factor (docs/securing-accounts.md). */
export function mfaRequired(): ApiError {
  return new ApiError(
    'mfa_required',
    'This account has a second factor: verify it (auth.mfa.challengeAndVerify) or use a passkey, then use the aal2 access token.',
  );
}

/** How a caller asks for the principal: `aal1`, an `aal1` token of a user with a factor is returned (marked `stepUp`) instead of refused. */
export interface ResolveOptions {
  aal1?: boolean;
}

/** Verifies a user access token; throws ApiError `invalid_token` / `token_expired`. */
export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

export interface ProjectKeys {
  publicKey: string;
  secretKey: string;
}

/** The secret key's principal (RLS bypassed); also what a console admin's cookie acts as where it counts (storage). */
export const SERVICE: Principal = Object.freeze({ role: 'service', claims: '{"role":"service"}', uid: null });
const ANON: Principal = { role: 'anon', claims: '{"role":"anon"}', uid: null };

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * The keys of a Supabase CLI project folder (supabase-keys.ts): its anon and service_role JWTs
 * (HS256 with the folder's JWT secret, or RS256/ES256 with its signing keys), user tokens
 * signed the same way, and its publishable/secret keys; `noKeyIsAnon` for a folder served on a
 * loopback address (Supabase's local stack takes a request without a key as anon).
 */
export interface SupabaseKeys {
  /** null: not a key or token of the folder (then Plinth's own verifier is asked). Throws ApiError for a bad one. */
  resolve(value: string): Promise<Principal | null>;
  noKeyIsAnon: boolean;
}

/**
 * Resolves the principal from `apikey` and `Authorization` headers. Keys are compared in
 * constant time (digests of equal length). A user token is verified by the injected verifier.
 * @example const who = createPrincipalResolver(keys, verify); await who(req.headers.apikey, req.headers.authorization)
 */
export function createPrincipalResolver(keys: ProjectKeys, verify: TokenVerifier, supabase?: SupabaseKeys) {
  const pub = digest(keys.publicKey);
  const sec = digest(keys.secretKey);
  // Each header value is hashed once and compared with both keys in constant time.
  const which = (k: string | undefined): 'secret' | 'public' | null => {
    if (k === undefined) return null;
    const d = digest(k);
    const isSecret = timingSafeEqual(d, sec);
    const isPublic = timingSafeEqual(d, pub);
    return isSecret ? 'secret' : isPublic ? 'public' : null;
  };

  return async function resolve(apikeyHeader: unknown, authorization: unknown, options?: ResolveOptions): Promise<Principal> {
    const apikey = typeof apikeyHeader === 'string' ? apikeyHeader.trim() : undefined;
    let bearer: string | undefined;
    if (typeof authorization === 'string') {
      const m = /^bearer\s+(.+)$/i.exec(authorization.trim());
      if (!m) throw new ApiError('unauthorized', 'The Authorization header must be "Bearer <key or token>".');
      bearer = m[1].trim();
    }
    const apikeyIs = which(apikey);
    const bearerIs = which(bearer);
    // A Supabase folder's keys and tokens (a Plinth key in a header keeps Plinth's rules for it).
    let folderApikey: Principal | null = null;
    if (supabase) {
      if (apikey === undefined && bearer === undefined && supabase.noKeyIsAnon) return ANON;
      folderApikey = apikey !== undefined && apikeyIs === null ? await supabase.resolve(apikey) : null;
      const folderBearer = bearer !== undefined && bearerIs === null ? await supabase.resolve(bearer) : null;
      const service = serviceOf(folderApikey, folderBearer);
      if (service) return service;
      if (folderBearer && (apikey === undefined || folderApikey || apikeyIs !== null)) return folderBearer;
      if (folderApikey && bearer === undefined) return folderApikey;
    }
    const apikeyOk = apikeyIs !== null || folderApikey !== null;
    if (apikeyIs === 'secret' || bearerIs === 'secret') return SERVICE;
    if (apikey !== undefined && !apikeyOk) throw new ApiError('unauthorized', 'The apikey is not a key of this project.');
    if (bearer === undefined || bearerIs === 'public') {
      if (apikeyIs === 'public' || bearerIs === 'public' || folderApikey) return folderApikey ?? ANON;
      throw new ApiError('unauthorized', 'Send the project key in the apikey header (public key) or as a Bearer token (secret key).');
    }
    if (!bearer.startsWith('ey')) {
      throw new ApiError('unauthorized', 'The Bearer value is neither a key of this project nor an access token.');
    }
    const token = await verify(bearer);
    const p = token.payload;
    if (p.role !== 'authenticated' || typeof p.sub !== 'string') {
      throw new ApiError('invalid_token', 'The access token is not a user token of this project.');
    }
    if (token.stepUp && !options?.aal1) throw mfaRequired();
    return {
      role: 'authenticated',
      claims: token.json,
      sub: p.sub,
      uid: isUuid(p.sub) ? p.sub : null,
      sessionId: typeof p.session_id === 'string' ? p.session_id : null,
      payload: p,
      stepUp: token.stepUp === true,
    };
  };
}

export type PrincipalResolver = ReturnType<typeof createPrincipalResolver>;

/** The service principal among two, else null. */
const serviceOf = (a: Principal | null, b: Principal | null): Principal | null =>
  a?.role === 'service' ? a : b?.role === 'service' ? b : null;
