import { ApiError } from '../../http/index.js';
import { sha256 } from '../../lib/index.js';
import type { AuthConfig, RateRule } from '../../config/index.js';
import { mailboxKey } from '../validate.js';
import type { Count, Counter } from './counter.js';

export {
  type Counter,
  createFallbackCounter,
  createMemoryCounter,
  createRateLimitStore,
  createRedisCounter,
  redisReady,
} from './counter.js';

/** 429 `rate_limited` with `Retry-After` in whole seconds (at least 1). */
export function rateLimited(resetMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new ApiError('rate_limited', `Too many attempts; try again in ${seconds} s.`, undefined, {
    headers: { 'retry-after': String(seconds) },
  });
}

/** Anonymous sign-ins per IP (GoTrue's default: 30 an hour). */
export const ANONYMOUS_PER_IP: RateRule = { max: 30, windowSeconds: 3600 };

// Emails are hashed into the key: counters (maybe in a shared Redis) never hold addresses.
const key = (kind: string, value: string) => `${kind}:${sha256(value).slice(0, 32)}`;

/**
 * The keyed limits of docs/api.md §5.6: sign-in failures per email and per IP, auth emails per
 * recipient, phone codes per number and per IP. Counted for unknown emails exactly as for known ones, so a 429 reveals nothing.
 * @example const limits = createAuthLimits(createMemoryCounter(clock), config); await limits.assertSignin(email, ip);
 */
export function createAuthLimits(
  counter: Counter,
  config: Pick<
    AuthConfig,
    | 'signinFailuresPerEmail'
    | 'signinFailuresPerEmailAllIps'
    | 'signinFailuresPerIp'
    | 'emailsPerRecipient'
    | 'emailsToUnknownPerIp'
    | 'codesPerPhoneMinute'
    | 'codesPerPhoneHour'
    | 'codesPerIp'
    | 'mfaFailuresPerUser'
  >,
) {
  const over = (c: Count, r: RateRule) => c.count >= r.max;
  return {
    /**
     * Throws 429 when this email has too many recent sign-in failures from this IP, or from
     * all IPs together (a much higher bar), or the IP has too many across emails. Counting
     * per (email, IP) is what keeps one attacker from locking the owner out: ten wrong
     * passwords from one address do not stop the owner signing in from another. `scope`
     * keeps another sign-in's counts apart (the console's admins: `admin:`).
     */
    async assertSignin(email: string, ip: string, scope = ''): Promise<void> {
      const rules: Array<[string, RateRule]> = [
        [key(`${scope}signin-email-ip`, `${email} ${ip}`), config.signinFailuresPerEmail],
        [key(`${scope}signin-email`, email), config.signinFailuresPerEmailAllIps],
        [key(`${scope}signin-ip`, ip), config.signinFailuresPerIp],
      ];
      const seen = await Promise.all(rules.map(([k]) => counter.peek(k)));
      seen.forEach((c, i) => {
        if (over(c, rules[i][1])) throw rateLimited(c.resetMs);
      });
    },
    async signinFailed(email: string, ip: string, scope = ''): Promise<void> {
      await Promise.all([
        counter.hit(key(`${scope}signin-email-ip`, `${email} ${ip}`), config.signinFailuresPerEmail.windowSeconds),
        counter.hit(key(`${scope}signin-email`, email), config.signinFailuresPerEmailAllIps.windowSeconds),
        counter.hit(key(`${scope}signin-ip`, ip), config.signinFailuresPerIp.windowSeconds),
      ]);
    },
    /**
     * Counts one email to `recipient`'s mailbox (`+tags` and Gmail's dots folded, so spelling
     * variants share one budget); throws 429 when over the limit.
     */
    async assertEmail(recipient: string): Promise<void> {
      const c = await counter.hit(key('email', mailboxKey(recipient)), config.emailsPerRecipient.windowSeconds);
      if (c.count > config.emailsPerRecipient.max) throw rateLimited(c.resetMs);
    },
    /** Counts one email from `ip` to an address with no account; false when the IP's budget is used up. */
    async tryUnknownRecipient(ip: string): Promise<boolean> {
      const c = await counter.hit(key('email-unknown-ip', ip), config.emailsToUnknownPerIp.windowSeconds);
      return c.count <= config.emailsToUnknownPerIp.max;
    },
    /**
     * Counts one phone code to `phone` from `ip`; throws 429 when the number had one this
     * minute, or too many this hour, or the IP asked for too many numbers (SMS pumping).
     */
    async assertPhoneCode(phone: string, ip: string): Promise<void> {
      // Peek first: a refused request does not use up the hour's allowance.
      const rules: Array<[string, RateRule]> = [
        [key('sms-phone-min', phone), config.codesPerPhoneMinute],
        [key('sms-phone-hour', phone), config.codesPerPhoneHour],
        [key('sms-ip', ip), config.codesPerIp],
      ];
      const seen = await Promise.all(rules.map(([k]) => counter.peek(k)));
      seen.forEach((c, i) => {
        if (over(c, rules[i][1])) throw rateLimited(c.resetMs);
      });
      await Promise.all(rules.map(([k, r]) => counter.hit(k, r.windowSeconds)));
    },
    /** Throws 429 when the user has had too many wrong second-factor codes lately. */
    /** An anonymous sign-in from `ip`: at most ANONYMOUS_PER_IP (429 `rate_limited` beyond). */
    async assertAnonymous(ip: string): Promise<void> {
      const c = await counter.hit(key('anonymous-ip', ip), ANONYMOUS_PER_IP.windowSeconds);
      if (c.count > ANONYMOUS_PER_IP.max) throw rateLimited(c.resetMs);
    },
    async assertMfa(userId: string): Promise<void> {
      const c = await counter.peek(key('mfa-user', userId));
      if (over(c, config.mfaFailuresPerUser)) throw rateLimited(c.resetMs);
    },
    /** Counts one wrong second-factor code of the user. */
    async mfaFailed(userId: string): Promise<void> {
      await counter.hit(key('mfa-user', userId), config.mfaFailuresPerUser.windowSeconds);
    },
    /**
     * Counts one email to `recipient`: 0 when it may go now, else how long (ms) until the
     * limit's window ends (a sign-up's mail is then held back that long, never dropped).
     */
    async emailDelay(recipient: string): Promise<number> {
      const c = await counter.hit(key('email', mailboxKey(recipient)), config.emailsPerRecipient.windowSeconds);
      return c.count <= config.emailsPerRecipient.max ? 0 : Math.max(1, c.resetMs);
    },
  };
}

export type AuthLimits = ReturnType<typeof createAuthLimits>;
