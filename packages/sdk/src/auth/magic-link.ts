import type { Result, Session } from '../types.js';
import { type AuthContext, call, completeSignIn, type SignInData } from './context.js';

export interface MagicLinkOptions {
  /**
   * Page the link points to instead of the project's `magic_link_url`, for this request only;
   * must be in the project's allowed redirect URLs (else `redirect_not_allowed`).
   */
  emailRedirectTo?: string;
}

/**
 * Emails a sign-in link to the project's magic-link page, or to `options.emailRedirectTo`
 * (POST /v1/auth/request-magic-link). Answers the same for unknown addresses; the account is
 * created when the link is used. Errors: `provider_disabled` (403) when magic links are off,
 * `redirect_not_allowed` (400), `rate_limited` (429: one email a minute per address).
 * @example await requestMagicLink(ctx, 'a@example.com', { emailRedirectTo: 'https://app.example.com/magic' });
 */
export async function requestMagicLink(ctx: AuthContext, email: string, options: MagicLinkOptions = {}): Promise<Result<null>> {
  const body = options.emailRedirectTo === undefined ? { email } : { email, emailRedirectTo: options.emailRedirectTo };
  const res = await call<unknown>(ctx, { method: 'POST', path: '/v1/auth/request-magic-link', body });
  return res.error ? res : { data: null, error: null };
}

/**
 * Signs in with the token of a magic link (POST /v1/auth/signin-magic-link). The token is
 * single use and valid 15 minutes; otherwise the error is `magic_link_invalid`.
 * @example const token = new URL(location.href).searchParams.get('token')!; const { data } = await signInWithMagicLink(ctx, token);
 */
export async function signInWithMagicLink(ctx: AuthContext, token: string): Promise<Result<SignInData>> {
  return completeSignIn(ctx, await call<Session>(ctx, { method: 'POST', path: '/v1/auth/signin-magic-link', body: { token } }));
}
