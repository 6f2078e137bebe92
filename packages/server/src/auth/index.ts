/**
 * End-user auth (docs/api.md §5). What this area adds:
 * - endpoints: signup, signin, signout, refresh, GET/PATCH user, reauthenticate, verify-email,
 *   resend-verification, forgot-password, reset-password, request-magic-link,
 *   signin-magic-link, phone/send-otp, phone/verify, factors… (mfa/), passkeys… (passkeys/),
 *   oauth/{provider} and its callback
 *   (built-in providers and those of `oidc_providers`: oauth/index.ts)
 *   (route table: routes.ts);
 *   the JWKS is served by app.ts from sessions/jwt.ts.
 * - tables: auth.users, passwords, identities, sessions, refresh_tokens, one_time_tokens
 *   (migration 0003_auth.sql), phone_codes (0005), oauth_flows (0009), oidc_tests (0090), reauth_codes and
 *   users.banned_until (0010), mfa_factors, mfa_challenges, recovery_codes, passkeys,
 *   passkey_challenges and sessions.aal/amr (0130), WebAuthn factors' credentials (0150), and the
 *   SQL runner's role `plinth_sql`.
 * - accounts/: the one home of every credential write and of the proof rule; sessions/state.ts
 *   the one home of session state (open, revoked, banned), which the gate (sessions/gate.ts)
 *   caches for the REST API, storage and every area that resolves a token.
 * - rate limits: sign-in failures per email and per IP, emails per recipient (limits/),
 *   phone codes per number and per IP, requests per IP (@fastify/rate-limit); in memory,
 *   or Redis with REDIS_URL.
 * - error codes: invalid_email, weak_password, email_exists, redirect_not_allowed,
 *   invalid_credentials, email_not_confirmed, invalid_refresh_token, refresh_token_reused,
 *   token_invalid, provider_disabled, rate_limited, magic_link_invalid, invalid_phone,
 *   invalid_code, code_expired, paid_plan_required, sms_not_configured, provider_not_found,
 *   invalid_state, oauth_failed, user_banned, reauthentication_required, oidc_unreachable,
 *   oidc_issuer_mismatch, oidc_unsupported, mfa_required, factor_not_found, challenge_invalid,
 *   too_many_factors, recovery_code_invalid, passkey_invalid, passkey_not_found.
 */
import { hookedOutbox } from './mail.js';
import rateLimit from '@fastify/rate-limit';
import type { Factor, Passkey } from '@plinth/shared';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/index.js';
import { ApiError, type App, type TokenVerifier } from '../http/index.js';
import { isUuid, sha256 } from '../lib/index.js';
import { type Accounts, createAccounts } from './accounts/index.js';
import type { AuthConfig } from '../config/index.js';
import type { AuthDeps, AuthOptions } from './deps.js';

export type { AuthOptions } from './deps.js';
import { type AuthGuards, createAuthGuards } from './guards.js';
export { type AuthGuards, clientOf } from './guards.js';
export type { AuthServices } from './routes.js';
import {
  createAuthLimits,
  type Counter,
  createFallbackCounter,
  createMemoryCounter,
  createRateLimitStore,
  rateLimited,
  createRedisCounter,
  redisReady,
} from './limits/index.js';
import { createArgon2Hasher, type PasswordHasher } from './password/hasher.js';
import { createPasswordService } from './password/service.js';
import { type AuthServices, registerAuthRoutes } from './routes.js';
import { type Rotation, rotateSigningKey, type TokenService } from './sessions/jwt.js';
import type { SessionGate } from './sessions/gate.js';
import { createSessionService } from './sessions/service.js';
import { createSessionState } from './sessions/state.js';
import { createUserService } from './users/service.js';
import { createVerificationService } from './verification/service.js';
import { createMagicLinkService } from './magic-link/service.js';
import { createPhoneService } from './phone/service.js';
import { createOAuthService } from './oauth/index.js';
import { createPublicHandlers } from './public.js';
import { createMfaService } from './mfa/service.js';
import { createPasskeyService } from './passkeys/service.js';
import { type AdminLinks, createAdminLinks } from './admin-links.js';
import { createAnonymousService } from './anonymous/service.js';
import { createAuthHooks, createHookRunner, type FunctionHookRunner } from './hooks.js';
export { type FunctionHookRunner, hookTarget } from './hooks.js';
export type { AdminLinkType } from './admin-links.js';

export { AUTH_DOCS, enabledProviders } from './responses.js';
export {
  type FaceStart,
  type IdTokenRefusal,
  oidcDiscovery,
  type OidcDiscovery,
  oidcSettingsCheck,
  type Redeemed,
  acceptForms,
  formFields,
} from './oauth/index.js';
export { createTokenService, type Rotation, type TokenService } from './sessions/jwt.js';
export { createSessionGate, type SessionGate } from './sessions/gate.js';
export { decideRefresh } from './sessions/refresh.js';
export type { AuthConfig } from '../config/index.js';
export type { PasswordHasher } from './password/hasher.js';
// The console admins (admin/) hash their passwords with the same argon2id parameters.
export { createArgon2Hasher } from './password/hasher.js';
export { type Accounts, findUserClaims, USER_COLUMNS } from './accounts/index.js';
export type { UserClaims } from './sessions/claims.js';
export { checkPassword, checkUserData, normalizeEmail } from './validate.js';
export { normalizePhone } from './phone/service.js';
export { EmailCode, type PkceChallenge, pkceChallenge, tokenOrCode } from './one-time.js';

/** Failed sign-ins counted and refused (429 `rate_limited`) like the end-users'. */
export interface SigninLimits {
  assert(email: string, ip: string): Promise<void>;
  failed(email: string, ip: string): Promise<void>;
}

export interface Auth {
  services: AuthServices;
  config: AuthConfig;
  hasher: PasswordHasher;
  /** Every write to users, passwords, identities and sessions (the console's user administration uses it too). */
  accounts: Accounts;
  /**
   * The sign-in failure limits of end-users, for the console's admins (counts of their own):
   * per (email, IP), per email from all IPs, per IP; in Redis when REDIS_URL is set.
   */
  adminSigninLimits: SigninLimits;
  /**
   * Rotates the project's signing key (docs/security.md, "Signing keys"); this instance signs
   * with the new key at once, the others when they hear of it (NOTIFY).
   * @example await auth.rotateSigningKey({ revoke: false }) // { kid, previous, retire_at, … }
   */
  rotateSigningKey(options: { revoke: boolean }): Promise<Rotation>;
  /** A user's second factors and passkeys for the console: listed, reset, one passkey removed. */
  secondFactors: {
    list(userId: string): Promise<{ factors: Factor[]; passkeys: Passkey[] }>;
    reset(userId: string): Promise<number>;
    removePasskey(userId: string, passkeyId: string): Promise<boolean>;
  };
  /** Links made for the secret key instead of mailed (supabase/auth's admin/generate_link). */
  adminLinks: AdminLinks;
  /** The guards of the route table (`apikey`, `user`, `stepUp`), for another face of these services. */
  guards: AuthGuards;
  /**
   * Mounts another face's routes (supabase/auth) in a scope of their own under the same per-IP
   * request limit as /v1/auth (one count for both).
   */
  mountFace(register: (scope: App) => void | Promise<void>): Promise<void>;
  /** How `function:<name>` hooks are called (the functions area's invokeAsService); until then such a hook fails. */
  useFunctionHooks(runner: FunctionHookRunner): void;
  /** Resolves once the work done after answers (forgot-password, resend, magic links) is done. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A signing-key rotation without a running server here (the CLI): the instances running on the
 * same database hear of it and follow.
 * @example await rotateSigningKeyOffline(db, { revoke: true });
 */
export function rotateSigningKeyOffline(db: Db, clock: Clock, options: { revoke: boolean }): Promise<Rotation> {
  return rotateSigningKey(db, clock, options, createSessionState({ evictUser: () => undefined, sync: async () => undefined }));
}

/** Where REDIS_URL points, for log lines: host and port, never the password. */
function redisWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 6379}`;
  } catch {
    return 'REDIS_URL';
  }
}

/**
 * The access-token verifier of every API area: the token's signature and expiry (TokenService),
 * then its session through the gate, so a signed-out, revoked or banned session's token is
 * refused within the same request (401 invalid_token). The session's level is the gate's too:
 * a token whose session was lowered to `aal1` (its user's last factor removed) counts as `aal1`
 * at once (`auth.jwt()->>'aal'` included), and an `aal1` token of a user with a verified
 * factor is marked `stepUp` (refused with 403 `mfa_required` by everything but the auth routes
 * that step up) while `mfa_enforcement` is `server` (docs/securing-accounts.md).
 * @example const resolvePrincipal = createPrincipalResolver(keys, gatedVerifier(tokens, gate, () => settings.auth().mfa_enforcement));
 */
export function gatedVerifier(tokens: TokenService, gate: SessionGate, enforcement: () => 'server' | 'policies'): TokenVerifier {
  return async (token) => {
    const verified = await tokens.verify(token);
    const { sub, session_id: sid } = verified.payload;
    const state = isUuid(sub) && isUuid(sid) ? await gate.check(sid, sub) : null;
    if (!state?.open) {
      throw new ApiError('invalid_token', 'The session of this access token has ended; sign in again.');
    }
    const claimed = verified.payload.aal === 'aal2' ? 'aal2' : 'aal1';
    const aal = claimed === 'aal2' && state.aal === 'aal2' ? 'aal2' : 'aal1';
    const stepUp = state.mfa && aal === 'aal1' && enforcement() === 'server';
    if (aal === claimed && !stepUp) return verified;
    if (aal === claimed) return { ...verified, stepUp };
    const payload = { ...verified.payload, aal };
    return { payload, json: JSON.stringify(payload), stepUp };
  };
}

/**
 * Builds the auth services and mounts the /v1/auth routes (in their own scope, so the per-IP
 * request limit applies to them only).
 * @example const auth = await registerAuth(app, { db, tokens, clock, settings, outbox, log, callers, config: config.auth, gate, oauth: config.oauth, discovery });
 */
export async function registerAuth(app: App, options: AuthOptions): Promise<Auth> {
  const { config } = options;
  // One Redis namespace per project: several projects may share a Redis. Redis down: the
  // counts fall back to this instance's (one warning), never a 5xx.
  const redis = config.redisUrl ? createRedisCounter(config.redisUrl, `plinth:${sha256(options.tokens.issuer).slice(0, 12)}:auth:`) : null;
  if (redis) await redisReady(redis.redis, 2000);
  const counter: Counter = redis
    ? createFallbackCounter(redis, createMemoryCounter(options.clock), options.log, redisWhere(config.redisUrl ?? ''))
    : createMemoryCounter(options.clock);
  const hasher = options.hasher ?? createArgon2Hasher(config.argon2);
  await hasher.dummyHash(); // made now, so the first unknown-email sign-in is not slower than the rest
  // Work after the answer: tracked, so tests can wait for it and close() lets it finish.
  const pending = new Set<Promise<void>>();
  const later = (work: () => Promise<void>) => {
    const p: Promise<void> = work()
      .catch((err) => options.log.error({ err }, 'auth: work after the answer failed'))
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  const settled = async () => {
    while (pending.size) await Promise.all([...pending]);
  };
  const state = createSessionState(options.gate);
  let functionHooks: FunctionHookRunner | null = null;
  const hooks = createAuthHooks(
    createHookRunner(options.db, () => functionHooks, { allowPrivate: config.hooksAllowPrivate, now: () => options.clock.now() }),
    () => options.settings.auth().hooks,
    options.clock,
    options.log,
  );
  const accounts = createAccounts(state, hooks);
  const limits = createAuthLimits(counter, config);
  // The send-email and send-SMS hooks stand in front of the outbox (auth/mail.ts).
  const siteUrl = () => options.settings.auth().allowed_redirect_urls[0] ?? options.tokens.issuer.replace(/\/v1\/auth$/, '');
  const outbox = hookedOutbox(options.outbox, hooks, siteUrl, () => options.clock.now(), options.log);
  const deps: AuthDeps = { ...options, outbox, config, hasher, limits, accounts, sessionState: state, hooks, later };
  const sessions = createSessionService(deps);
  const services: AuthServices = {
    sessions,
    password: createPasswordService(deps, sessions),
    users: createUserService(deps),
    verification: createVerificationService(deps, sessions),
    magicLink: createMagicLinkService(deps, sessions),
    phone: createPhoneService(deps, sessions),
    oauth: createOAuthService(deps, sessions, options.oauth, options.discovery),
    mfa: createMfaService(deps, sessions),
    passkeys: createPasskeyService(deps, sessions),
    anonymous: createAnonymousService(deps, sessions),
    public: createPublicHandlers(options.settings, options.tokens),
  };
  const guards = createAuthGuards(options.callers, options.gate, () => options.settings.auth().mfa_enforcement);
  // One per-IP count for /v1/auth and every other face of these services (supabase/auth), in
  // the fallback counter (Redis when configured), so a client cannot double its budget by
  // alternating faces.
  const limited = async (register: (scope: App) => void | Promise<void>) => {
    await app.register(async (scope) => {
      await scope.register(rateLimit, {
        global: true,
        max: config.requestsPerIp.max,
        timeWindow: config.requestsPerIp.windowSeconds * 1000,
        store: createRateLimitStore(counter, 'ip:'),
        errorResponseBuilder: (_req, ctx) => rateLimited(ctx.ttl),
      });
      await register(scope as unknown as App);
    });
  };
  await limited((scope) => registerAuthRoutes(scope, guards, services));
  return {
    services,
    config,
    hasher,
    accounts,
    guards,
    adminLinks: createAdminLinks(deps),
    mountFace: limited,
    useFunctionHooks(runner) {
      functionHooks = runner;
    },
    async rotateSigningKey(o) {
      const rotation = await rotateSigningKey(options.db, options.clock, o, state);
      await options.tokens.reloadKeys(o.revoke);
      return rotation;
    },
    secondFactors: {
      list: async (userId) => ({ ...(await services.mfa.list(userId)), ...(await services.passkeys.list(userId)) }),
      reset: (userId) => services.mfa.reset(userId),
      removePasskey: (userId, id) => services.passkeys.remove(userId, id),
    },
    adminSigninLimits: {
      assert: (email, ip) => limits.assertSignin(email, ip, 'admin:'),
      failed: (email, ip) => limits.signinFailed(email, ip, 'admin:'),
    },
    settled,
    async close() {
      await settled();
      await counter.close();
    },
  };
}
