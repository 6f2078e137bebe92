import type { Result, Session } from '../types.js';
import { type AuthContext, call, completeSignIn, type SignInData } from './context.js';

/**
 * Emails a sign-in link to the project's magic-link page (POST /v1/auth/request-magic-link).
 * Answers the same for unknown addresses; the account is created when the link is used.
 * @example await requestMagicLink(ctx, 'a@example.com');
 */
export async function requestMagicLink(ctx: AuthContext, email: string): Promise<Result<null>> {
  const res = await call<unknown>(ctx, { method: 'POST', path: '/v1/auth/request-magic-link', body: { email } });
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
