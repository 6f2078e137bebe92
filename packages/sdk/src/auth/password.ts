import type { Result, Session, User } from '../types.js';
import { type AuthContext, call, completeSignIn, type SignInData } from './context.js';

export interface SignUpCredentials {
  email: string;
  password: string;
  /** Page the verification link points to; must be in the project's allowed redirect URLs. */
  emailRedirectTo?: string;
  /** Extra user data passed through to the server (e.g. `{ name }`). */
  data?: Record<string, unknown>;
}

export interface SignUpData {
  user: User;
  /** Null while email confirmation is pending. */
  session: Session | null;
}

/**
 * Creates an account (POST /v1/auth/signup). When the project does not require email
 * confirmation the user is signed in at once and SIGNED_IN is emitted.
 * @example const { data, error } = await signUp(ctx, { email: 'a@example.com', password: 'correct horse' });
 */
export async function signUp(ctx: AuthContext, credentials: SignUpCredentials): Promise<Result<SignUpData>> {
  const res = await call<{ user: User; session: Session | null }>(ctx, { method: 'POST', path: '/v1/auth/signup', body: credentials });
  if (res.error) return res;
  if (!res.data.session) return { data: { user: res.data.user, session: null }, error: null };
  const signedIn = await completeSignIn(ctx, { data: { ...res.data.session, user: res.data.session.user ?? res.data.user }, error: null });
  return signedIn.error ? signedIn : { data: { user: signedIn.data.user, session: signedIn.data.session }, error: null };
}

/**
 * Signs in with email and password (POST /v1/auth/signin).
 * @example const { data, error } = await signIn(ctx, { email: 'a@example.com', password: 'correct horse' });
 */
export async function signIn(ctx: AuthContext, credentials: { email: string; password: string }): Promise<Result<SignInData>> {
  const body = { email: credentials.email, password: credentials.password };
  return completeSignIn(ctx, await call<Session>(ctx, { method: 'POST', path: '/v1/auth/signin', body }));
}

/**
 * Asks for a password-reset email (POST /v1/auth/forgot-password). Succeeds for unknown
 * addresses too, so it cannot be used to probe for accounts.
 * @example await forgotPassword(ctx, 'a@example.com');
 */
export async function forgotPassword(ctx: AuthContext, email: string): Promise<Result<null>> {
  const res = await call<unknown>(ctx, { method: 'POST', path: '/v1/auth/forgot-password', body: { email } });
  return res.error ? res : { data: null, error: null };
}

/**
 * Sets a new password with the token from the reset link (POST /v1/auth/reset-password) and
 * emits PASSWORD_RECOVERY. The server revokes the user's other sessions.
 * @example const token = new URL(location.href).searchParams.get('token')!; await resetPassword(ctx, token, 'new secret 123');
 */
export async function resetPassword(ctx: AuthContext, token: string, newPassword: string): Promise<Result<{ user: User }>> {
  const res = await call<{ user: User }>(ctx, { method: 'POST', path: '/v1/auth/reset-password', body: { token, password: newPassword } });
  if (res.error) return res;
  await ctx.session.ready;
  ctx.session.announce('PASSWORD_RECOVERY');
  return res;
}
