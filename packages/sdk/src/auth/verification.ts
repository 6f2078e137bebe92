import type { Result, User } from '../types.js';
import { type AuthContext, call } from './context.js';

/**
 * Confirms an email address with the token from the verification link
 * (POST /v1/auth/verify-email). When the signed-in user is the one verified, the stored user
 * is updated and USER_UPDATED is emitted.
 * @example const token = new URL(location.href).searchParams.get('token')!; const { error } = await verifyEmail(ctx, token);
 */
export async function verifyEmail(ctx: AuthContext, token: string): Promise<Result<{ user: User }>> {
  const res = await call<{ user: User }>(ctx, { method: 'POST', path: '/v1/auth/verify-email', body: { token } });
  if (res.error) return res;
  await ctx.session.ready;
  if (res.data.user && ctx.session.peek()?.user?.id === res.data.user.id) await ctx.session.setUser(res.data.user);
  return res;
}

/**
 * Sends the verification email again (POST /v1/auth/resend-verification). Answers the same
 * for unknown addresses.
 * @example await resendVerification(ctx, 'a@example.com');
 */
export async function resendVerification(ctx: AuthContext, email: string): Promise<Result<null>> {
  const res = await call<unknown>(ctx, { method: 'POST', path: '/v1/auth/resend-verification', body: { email } });
  return res.error ? res : { data: null, error: null };
}
