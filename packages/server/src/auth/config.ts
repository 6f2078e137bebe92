/**
 * Tunables of the auth area, read from the config's env (the config module is the only
 * reader of process.env; this only parses what it collected). Defaults are the documented
 * ones (API.md §4, docs/security.md).
 */

/** A limit of `max` events per `windowSeconds` (fixed window). */
export interface RateRule {
  max: number;
  windowSeconds: number;
}

export interface Argon2Params {
  /** KiB of memory (OWASP: 19456). */
  memoryCost: number;
  /** Passes (OWASP: 2). */
  timeCost: number;
  parallelism: number;
}

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
}

export const OWASP_ARGON2: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** `"5/900"` → 5 per 900 s. */
function rule(value: string | undefined, fallback: RateRule, name: string): RateRule {
  if (value === undefined || value === '') return fallback;
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  if (!m || Number(m[2]) === 0) throw new Error(`config: ${name} must look like "max/windowSeconds", got "${value}"`);
  return { max: Number(m[1]), windowSeconds: Number(m[2]) };
}

function int(value: string | undefined, fallback: number, name: string, min = 1): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`config: ${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

/**
 * The auth config from the collected environment.
 * @example authConfig({ AUTH_RATE_SIGNIN_EMAIL: '5/900' }).signinFailuresPerEmail // { max: 5, windowSeconds: 900 }
 */
export function authConfig(env: Record<string, string | undefined>, redisUrl: string | null = env.REDIS_URL || null): AuthConfig {
  return {
    argon2: {
      memoryCost: int(env.AUTH_ARGON2_MEMORY_KIB, OWASP_ARGON2.memoryCost, 'AUTH_ARGON2_MEMORY_KIB', 8),
      timeCost: int(env.AUTH_ARGON2_TIME_COST, OWASP_ARGON2.timeCost, 'AUTH_ARGON2_TIME_COST'),
      parallelism: int(env.AUTH_ARGON2_PARALLELISM, OWASP_ARGON2.parallelism, 'AUTH_ARGON2_PARALLELISM'),
    },
    signinFailuresPerEmail: rule(env.AUTH_RATE_SIGNIN_EMAIL, { max: 10, windowSeconds: 900 }, 'AUTH_RATE_SIGNIN_EMAIL'),
    signinFailuresPerEmailAllIps: rule(env.AUTH_RATE_SIGNIN_EMAIL_ALL, { max: 100, windowSeconds: 900 }, 'AUTH_RATE_SIGNIN_EMAIL_ALL'),
    signinFailuresPerIp: rule(env.AUTH_RATE_SIGNIN_IP, { max: 50, windowSeconds: 900 }, 'AUTH_RATE_SIGNIN_IP'),
    emailsPerRecipient: rule(env.AUTH_RATE_EMAIL_RECIPIENT, { max: 1, windowSeconds: 60 }, 'AUTH_RATE_EMAIL_RECIPIENT'),
    emailsToUnknownPerIp: rule(env.AUTH_RATE_EMAIL_UNKNOWN_IP, { max: 30, windowSeconds: 3600 }, 'AUTH_RATE_EMAIL_UNKNOWN_IP'),
    requestsPerIp: rule(env.AUTH_RATE_REQUESTS_IP, { max: 300, windowSeconds: 60 }, 'AUTH_RATE_REQUESTS_IP'),
    codesPerPhoneMinute: rule(env.AUTH_RATE_SMS_PHONE_MINUTE, { max: 1, windowSeconds: 60 }, 'AUTH_RATE_SMS_PHONE_MINUTE'),
    codesPerPhoneHour: rule(env.AUTH_RATE_SMS_PHONE_HOUR, { max: 5, windowSeconds: 3600 }, 'AUTH_RATE_SMS_PHONE_HOUR'),
    codesPerIp: rule(env.AUTH_RATE_SMS_IP, { max: 20, windowSeconds: 3600 }, 'AUTH_RATE_SMS_IP'),
    refreshGraceMs: int(env.AUTH_REFRESH_GRACE_SECONDS, 10, 'AUTH_REFRESH_GRACE_SECONDS', 0) * 1000,
    sessionIdleMs: int(env.AUTH_SESSION_IDLE_SECONDS, 30 * 24 * 3600, 'AUTH_SESSION_IDLE_SECONDS') * 1000,
    sessionCheckMs: int(env.AUTH_SESSION_CHECK_SECONDS, 5, 'AUTH_SESSION_CHECK_SECONDS', 0) * 1000,
    reauthWindowMs: int(env.AUTH_REAUTH_WINDOW_SECONDS, 600, 'AUTH_REAUTH_WINDOW_SECONDS', 0) * 1000,
    reauthCodeTtlMs: 10 * 60 * 1000,
    verificationTtlMs: 24 * 3600 * 1000,
    resetTtlMs: 3600 * 1000,
    magicLinkTtlMs: 15 * 60 * 1000,
    phoneCodeTtlMs: 10 * 60 * 1000,
    phoneCodeMaxAttempts: 5,
    redisUrl,
  };
}
