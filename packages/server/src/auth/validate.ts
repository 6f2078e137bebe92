import { ApiError } from '../http/index.js';

const MAX_PASSWORD = 128;
// A dot-atom local part (RFC 5322 atext, plus letters and digits of any script) at a domain of
// letter/digit/hyphen labels. Deliverability is proven by the verification mail, not by a regex;
// this only refuses what a mail library would read as something else: `root,victim@x` and
// `bcc:x,y@x` are address LISTS to nodemailer, quoted or commented parts, brackets, spaces.
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\p{L}\\p{M}\\p{N}-]";
const LABEL = '[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]{0,61}[\\p{L}\\p{M}\\p{N}])?';
const EMAIL = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*@${LABEL}(?:\\.${LABEL})+$`, 'u');

/**
 * Trims and lowercases an email, or throws 400 `invalid_email`.
 * @example normalizeEmail('  Ann@Example.COM ') // 'ann@example.com'
 */
export function normalizeEmail(input: unknown): string {
  const email = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (email.length > 254 || LONE_SURROGATE.test(email) || email.indexOf('@') > 64 || !EMAIL.test(email)) {
    throw new ApiError('invalid_email', 'The email address is not valid.');
  }
  return email;
}

/** An unpaired UTF-16 surrogate: text PostgreSQL (jsonb, text) cannot store. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether PostgreSQL can store the text: no NUL, no unpaired surrogate.
 * @example storableText('Ada') // true; storableText('a\u0000') // false
 */
export function storableText(v: string): boolean {
  return !v.includes('\u0000') && !LONE_SURROGATE.test(v);
}

const DATA_MAX_DEPTH = 16;
const DATA_MAX_BYTES = 16 * 1024;

/**
 * The sign-up `data` (kept on the user as jsonb): a JSON object of at most 16 levels and
 * 16 KiB whose strings PostgreSQL can store (no NUL, no lone surrogate), else 400
 * `invalid_request`. Checked before it reaches JSON.stringify or the database.
 * @example checkUserData({ plan: 'pro' }) // { plan: 'pro' }
 */
export function checkUserData(data: unknown): Record<string, unknown> {
  if (data === undefined || data === null) return {};
  const bad = (why: string, code: 'invalid_request' | 'invalid_value' = 'invalid_request') =>
    new ApiError(code, `data ${why}.`, [{ field: 'body.data', message: why }]);
  const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';
  if (typeof data !== 'object' || Array.isArray(data)) throw bad('must be a JSON object');
  const text = storableText;
  const walk = (v: unknown, depth: number): void => {
    if (depth > DATA_MAX_DEPTH) throw bad(`must not be nested more than ${DATA_MAX_DEPTH} levels deep`);
    if (typeof v === 'string') {
      if (!text(v)) throw bad(UNSTORABLE, 'invalid_value');
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (!text(k)) throw bad(UNSTORABLE, 'invalid_value');
        walk(x, depth + 1);
      }
    }
  };
  walk(data, 1);
  if (Buffer.byteLength(JSON.stringify(data)) > DATA_MAX_BYTES) throw bad(`must be at most ${DATA_MAX_BYTES} bytes of JSON`);
  return data as Record<string, unknown>;
}

/**
 * The key a per-recipient email limit counts under: the mailbox, not the spelling. `+tags`
 * are dropped everywhere (over-counting a mailbox costs nothing) and dots where the domain
 * ignores them, so `a.b+1@gmail.com` and `ab+2@gmail.com` share one budget.
 * @example mailboxKey('A.Da+news@Gmail.com') // 'ada@gmail.com'
 */
export function mailboxKey(email: string): string {
  const at = email.lastIndexOf('@');
  let local = email.slice(0, at).toLowerCase();
  const domain = email.slice(at + 1).toLowerCase();
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (domain === 'gmail.com' || domain === 'googlemail.com') local = local.replaceAll('.', '');
  return `${local}@${domain === 'googlemail.com' ? 'gmail.com' : domain}`;
}

/**
 * Checks a new password's length in characters (not bytes): `min` up to 128, else 400 `weak_password`.
 * @example checkPassword('correct horse', 8) // ok; checkPassword('short', 8) // throws
 */
export function checkPassword(password: unknown, min: number): string {
  if (typeof password !== 'string')
    throw new ApiError('weak_password', `The password must be a string of ${min} to ${MAX_PASSWORD} characters.`);
  const length = [...password].length;
  if (length < min || length > MAX_PASSWORD) {
    throw new ApiError('weak_password', `The password must be ${min} to ${MAX_PASSWORD} characters long.`, {
      min_length: min,
      max_length: MAX_PASSWORD,
    });
  }
  return password;
}

/**
 * A page the app asked to send the user to (`emailRedirectTo`, `redirect_url`), checked against
 * the project's `allowed_redirect_urls` with the one matcher (packages/shared, also the
 * console's URL tester): the URL, or 400 `redirect_not_allowed`. Open-redirect defence.
 * @example const page = allowedRedirect(settings, input.emailRedirectTo, 'emailRedirectTo') ?? s.email_verification_url;
 */
export function allowedRedirect(settings: { isRedirectAllowed(url: string): boolean }, value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !settings.isRedirectAllowed(value)) {
    throw new ApiError('redirect_not_allowed', `${field} is not in the allowed redirect URLs of the project.`);
  }
  return value;
}
