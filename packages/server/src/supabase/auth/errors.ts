import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/index.js';

/**
 * An error in GoTrue's terms: its HTTP status, its `error_code` (GoTrue's list, which auth-js
 * reads: `AuthApiError.code`), the message, and fields GoTrue adds beside them
 * (`weak_password: {reasons}`).
 */
export class GoTrueError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'GoTrueError';
  }
}

/** What a route says its errors mean where one Plinth code stands for several of GoTrue's. */
export interface ErrorContext {
  /** `email_exists` of a sign-up is GoTrue's `user_already_exists`. */
  signup?: boolean;
  /** `rate_limited` where an email is sent is GoTrue's `over_email_send_rate_limit`. */
  sendsEmail?: boolean;
  /** `invalid_code` of a factor's verification is GoTrue's `mfa_verification_failed`. */
  mfa?: boolean;
  /** `provider_disabled` (no relying party: passkey_enabled off) on a passkey route is GoTrue's `passkey_disabled` (404). */
  passkey?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    goTrue?: ErrorContext;
  }
}

type Mapped = [status: number, code: string, message?: string];

/**
 * Plinth's error codes (packages/shared/src/errors.ts) as GoTrue's: the status and code auth-js
 * and apps test for. The rule that refused stays Plinth's; only its name changes.
 */
const CODES: Record<string, Mapped> = {
  invalid_credentials: [400, 'invalid_credentials', 'Invalid login credentials'],
  email_not_confirmed: [400, 'email_not_confirmed', 'Email not confirmed'],
  weak_password: [422, 'weak_password'],
  email_exists: [422, 'email_exists', 'A user with this email address has already been registered'],
  phone_exists: [422, 'phone_exists', 'A user with this phone number has already been registered'],
  rate_limited: [429, 'over_request_rate_limit'],
  invalid_refresh_token: [400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found'],
  refresh_token_reused: [400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used'],
  token_invalid: [403, 'otp_expired', 'Token has expired or is invalid'],
  magic_link_invalid: [403, 'otp_expired', 'Token has expired or is invalid'],
  invalid_code: [403, 'otp_expired', 'Token has expired or is invalid'],
  code_expired: [403, 'otp_expired', 'Token has expired or is invalid'],
  provider_disabled: [422, 'provider_disabled'],
  unauthorized: [401, 'no_authorization', 'This endpoint requires a valid Bearer token'],
  token_expired: [403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired'],
  mfa_required: [403, 'insufficient_aal'],
  reauthentication_required: [400, 'reauthentication_needed'],
  user_banned: [403, 'user_banned', 'User is banned'],
  redirect_not_allowed: [400, 'validation_failed'],
  invalid_email: [400, 'validation_failed', 'Unable to validate email address: invalid format'],
  invalid_phone: [400, 'validation_failed'],
  invalid_request: [400, 'validation_failed'],
  invalid_value: [400, 'validation_failed'],
  invalid_json: [400, 'bad_json'],
  payload_too_large: [413, 'request_timeout'],
  forbidden: [403, 'not_admin', 'User not allowed'],
  user_not_found: [404, 'user_not_found', 'User not found'],
  route_not_found: [404, 'not_found'],
  factor_not_found: [404, 'mfa_factor_not_found'],
  passkey_not_found: [404, 'validation_failed', 'Passkey not found'],
  challenge_invalid: [422, 'mfa_verification_failed'],
  too_many_factors: [422, 'too_many_enrolled_mfa_factors'],
  too_many_passkeys: [422, 'too_many_passkeys', 'Maximum number of passkeys reached'],
  identity_not_found: [422, 'identity_not_found', "Identity doesn't exist"],
  last_identity: [422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking'],
  identity_exists: [422, 'identity_already_exists', 'Identity is already linked to another user'],
  pkce_required: [400, 'validation_failed'],
  invalid_state: [400, 'bad_oauth_state'],
  oauth_failed: [400, 'bad_oauth_callback'],
  sms_not_configured: [500, 'sms_send_failed'],
  paid_plan_required: [422, 'phone_provider_disabled'],
  database_unavailable: [503, 'unexpected_failure'],
};

/**
 * Any error of a /auth/v1 route as GoTrue's: an ApiError through the table above (a session
 * ended or unknown: `session_not_found`, which auth-js reads as signed out), Fastify's own
 * (a body that is not JSON, a rate limit) by their status, anything else 500.
 * @example throw goTrueErrorOf(new ApiError('invalid_credentials', '…'), {});
 */
export function goTrueErrorOf(err: unknown, ctx: ErrorContext = {}): GoTrueError {
  if (err instanceof GoTrueError) return err;
  if (err instanceof ApiError) {
    const headers = err.headers ?? {};
    if (err.code === 'invalid_token') {
      return /session/i.test(err.message)
        ? new GoTrueError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist', {}, headers)
        : new GoTrueError(403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature', {}, headers);
    }
    if (err.code === 'email_exists' && ctx.signup)
      return new GoTrueError(422, 'user_already_exists', 'User already registered', {}, headers);
    if (err.code === 'invalid_code' && ctx.mfa)
      return new GoTrueError(422, 'mfa_verification_failed', 'Invalid TOTP code entered', {}, headers);
    if (err.code === 'rate_limited' && ctx.sendsEmail) return new GoTrueError(429, 'over_email_send_rate_limit', err.message, {}, headers);
    // GoTrue refuses a passkey sign-in of an unconfirmed address with 403 (a password sign-in: 400).
    if (err.code === 'email_not_confirmed' && ctx.passkey)
      return new GoTrueError(403, 'email_not_confirmed', 'Email not confirmed', {}, headers);
    if (err.code === 'provider_disabled' && ctx.passkey)
      return new GoTrueError(404, 'passkey_disabled', 'Passkeys are disabled', {}, headers);
    if (err.code === 'passkey_invalid') {
      // The challenge (unknown, expired, used, another user's) or the credential itself.
      const challenge = Array.isArray(err.details) && err.details.some((d) => (d as { field?: unknown })?.field === 'challenge_id');
      return challenge
        ? new GoTrueError(400, 'webauthn_challenge_not_found', 'Challenge not found or already used', {}, headers)
        : new GoTrueError(400, 'webauthn_verification_failed', 'Credential verification failed', {}, headers);
    }
    if (err.code === 'send_hook_failed') {
      // The project's send hook failed: nothing was sent (502, never a bare 500).
      const sms = (err.details as { hook?: unknown } | undefined)?.hook === 'send_sms';
      return new GoTrueError(502, sms ? 'sms_send_failed' : 'email_send_failed', err.message, {}, headers);
    }
    if (err.code === 'weak_password') {
      // GoTrue's sentence, which apps and auth-js's tests match; the bound is Plinth's setting.
      const min = (err.details as { min_length?: unknown } | undefined)?.min_length;
      const message = typeof min === 'number' ? `Password should be at least ${min} characters.` : err.message;
      return new GoTrueError(422, 'weak_password', message, { weak_password: { reasons: ['length'] } }, headers);
    }
    const mapped = CODES[err.code];
    if (mapped) return new GoTrueError(mapped[0], mapped[1], mapped[2] ?? err.message, {}, headers);
    return new GoTrueError(err.status, err.status >= 500 ? 'unexpected_failure' : 'validation_failed', err.message, {}, headers);
  }
  const fe = err as Partial<FastifyError> | null;
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status === 400 && fe?.code?.startsWith('FST_ERR_CTP'))
    return new GoTrueError(400, 'bad_json', 'Could not parse request body as JSON');
  if (status === 413) return new GoTrueError(413, 'validation_failed', 'Request body too large');
  if (status === 415) return new GoTrueError(415, 'validation_failed', 'Unsupported content type');
  if (status >= 400 && status < 500) return new GoTrueError(status, 'validation_failed', fe?.message ?? 'Bad request');
  return new GoTrueError(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information');
}

/** The API version a request asked for (`X-Supabase-Api-Version`), when it is one GoTrue knows. */
function asksVersion(req: FastifyRequest): boolean {
  const v = req.headers['x-supabase-api-version'];
  return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= '2024-01-01';
}

/**
 * Sends an error as GoTrue does: with `X-Supabase-Api-Version: 2024-01-01` asked (auth-js
 * always asks), `{code: <error_code>, message}` and the header back; else the older
 * `{code: <status>, error_code, msg}`.
 */
export function sendGoTrueError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = goTrueErrorOf(err, req.routeOptions.config?.goTrue);
  if (e.status >= 500) req.log.error({ err, url: req.url.split('?')[0] }, 'auth/v1 request failed');
  reply.headers(e.headers).code(e.status).type('application/json; charset=utf-8');
  if (asksVersion(req)) {
    reply.header('x-supabase-api-version', '2024-01-01').send({ code: e.errorCode, message: e.message, ...e.extra });
  } else {
    reply.send({ code: e.status, error_code: e.errorCode, msg: e.message, ...e.extra });
  }
}
