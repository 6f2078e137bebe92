import { bool, type Env, int, type RateRule, rule } from './parse.js';

/**
 * The auth area's tunables (`AUTH_*`), parsed once here. Defaults are the documented ones
 * (docs/api.md §5.6, docs/security.md).
 */
export interface AuthConfig {
  argon2: Argon2Params;
  /** Sign-in failures per email address from one IP (what locks a guesser out, not the owner). */
  signinFailuresPerEmail: RateRule;
  /** Sign-in failures per email address from all IPs together (a distributed guesser). */
  signinFailuresPerEmailAllIps: RateRule;
  /** Sign-in failures per client IP. */
  signinFailuresPerIp: RateRule;
  /** Auth emails (verification, reset, email change) per recipient. */
  emailsPerRecipient: RateRule;
  /** Emails per client IP to addresses that have no account (magic links to strangers). */
  emailsToUnknownPerIp: RateRule;
  /** All requests to the auth endpoints per client IP (@fastify/rate-limit). */
  requestsPerIp: RateRule;
  /** Phone codes per number: one a minute and a few an hour (SMS pumping, code guessing). */
  codesPerPhoneMinute: RateRule;
  codesPerPhoneHour: RateRule;
  /** Phone codes requested per client IP, whatever the number (SMS pumping). */
  codesPerIp: RateRule;
  /** Wrong second-factor codes (TOTP, recovery codes) per user, across challenges. */
  mfaFailuresPerUser: RateRule;
  /** A rotated refresh token still yields the current token set for this long (two tabs). */
  refreshGraceMs: number;
  /** A session not refreshed for this long is over. */
  sessionIdleMs: number;
  /** How long the REST API trusts a session-open answer before asking again (revocations evict at once). */
  sessionCheckMs: number;
  /** A sign-in this recent lets the user change password or email without reauthenticating. */
  reauthWindowMs: number;
  reauthCodeTtlMs: number;
  verificationTtlMs: number;
  resetTtlMs: number;
  magicLinkTtlMs: number;
  phoneCodeTtlMs: number;
  /** Wrong codes that void a phone code. */
  phoneCodeMaxAttempts: number;
  /** `REDIS_URL`: counters shared by every instance; else in memory. */
  redisUrl: string | null;
  /** `WEBHOOK_ALLOW_PRIVATE`: an http(s) send-email or send-SMS hook may reach private and loopback addresses, as webhooks may. */
  hooksAllowPrivate: boolean;
}

export interface Argon2Params {
  /** KiB of memory (OWASP: 19456). */
  memoryCost: number;
  /** Passes (OWASP: 2). */
  timeCost: number;
  parallelism: number;
}

export const OWASP_ARGON2: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * @example parseAuth({ AUTH_RATE_SIGNIN_EMAIL: '5/900' }, null).signinFailuresPerEmail // { max: 5, windowSeconds: 900 }
 */
export function parseAuth(env: Env, redisUrl: string | null): AuthConfig {
  return {
    argon2: {
      memoryCost: int(env, 'AUTH_ARGON2_MEMORY_KIB', OWASP_ARGON2.memoryCost, { min: 8 }),
      timeCost: int(env, 'AUTH_ARGON2_TIME_COST', OWASP_ARGON2.timeCost, { min: 1 }),
      parallelism: int(env, 'AUTH_ARGON2_PARALLELISM', OWASP_ARGON2.parallelism, { min: 1 }),
    },
    signinFailuresPerEmail: rule(env, 'AUTH_RATE_SIGNIN_EMAIL', { max: 10, windowSeconds: 900 }),
    signinFailuresPerEmailAllIps: rule(env, 'AUTH_RATE_SIGNIN_EMAIL_ALL', { max: 100, windowSeconds: 900 }),
    signinFailuresPerIp: rule(env, 'AUTH_RATE_SIGNIN_IP', { max: 50, windowSeconds: 900 }),
    emailsPerRecipient: rule(env, 'AUTH_RATE_EMAIL_RECIPIENT', { max: 1, windowSeconds: 60 }),
    emailsToUnknownPerIp: rule(env, 'AUTH_RATE_EMAIL_UNKNOWN_IP', { max: 30, windowSeconds: 3600 }),
    requestsPerIp: rule(env, 'AUTH_RATE_REQUESTS_IP', { max: 300, windowSeconds: 60 }),
    codesPerPhoneMinute: rule(env, 'AUTH_RATE_SMS_PHONE_MINUTE', { max: 1, windowSeconds: 60 }),
    codesPerPhoneHour: rule(env, 'AUTH_RATE_SMS_PHONE_HOUR', { max: 5, windowSeconds: 3600 }),
    codesPerIp: rule(env, 'AUTH_RATE_SMS_IP', { max: 20, windowSeconds: 3600 }),
    // 1,000,000 codes, 3 of them good at any time (±1 step): at 30 guesses per 15 minutes a
    // guesser needs about 115 days on average (docs/securing-accounts.md).
    mfaFailuresPerUser: rule(env, 'AUTH_RATE_MFA_USER', { max: 30, windowSeconds: 900 }),
    refreshGraceMs: int(env, 'AUTH_REFRESH_GRACE_SECONDS', 10) * 1000,
    sessionIdleMs: int(env, 'AUTH_SESSION_IDLE_SECONDS', 30 * 24 * 3600, { min: 1 }) * 1000,
    sessionCheckMs: int(env, 'AUTH_SESSION_CHECK_SECONDS', 5) * 1000,
    reauthWindowMs: int(env, 'AUTH_REAUTH_WINDOW_SECONDS', 600) * 1000,
    reauthCodeTtlMs: 10 * 60 * 1000,
    verificationTtlMs: 24 * 3600 * 1000,
    resetTtlMs: 3600 * 1000,
    magicLinkTtlMs: 15 * 60 * 1000,
    phoneCodeTtlMs: 10 * 60 * 1000,
    phoneCodeMaxAttempts: 5,
    redisUrl,
    hooksAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
  };
}
