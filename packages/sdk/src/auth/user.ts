import { clientError } from '../errors.js';
import type { Result, User } from '../types.js';
import { type AuthContext, callAsUser } from './context.js';

/** Fields `updateUser` can change. A new email is only applied after it is verified. */
export interface UserAttributes {
  email?: string;
  password?: string;
  /** null clears it. */
  name?: string | null;
  avatar?: string | null;
  /** Page the verification link of a new email points to; must be an allowed redirect URL. */
  emailRedirectTo?: string;
  /**
   * A password or email change without a recent sign-in must prove it is still the user (else
   * 403 `reauthentication_required`): the current password, or the code `reauthenticate()` sent.
   */
  currentPassword?: string;
  nonce?: string;
}

/**
 * Fetches the signed-in user from the server (GET /v1/auth/user), so the answer reflects
 * changes made elsewhere; `getSession()` returns the stored copy without a request.
 * @example const { data, error } = await getUser(ctx); if (data) console.log(data.user.email);
 */
export async function getUser(ctx: AuthContext): Promise<Result<{ user: User }>> {
  await ctx.session.ready;
  if (!ctx.session.peek()) return { data: null, error: clientError('session_missing', 'Not signed in.') };
  const res = await callAsUser<User>(ctx, { path: '/v1/auth/user' });
  return res.error ? res : { data: { user: unwrapUser(res.data) }, error: null };
}

/**
 * Changes the signed-in user (PATCH /v1/auth/user), stores the answer and emits USER_UPDATED.
 * @example const { data, error } = await updateUser(ctx, { name: 'Ada' });
 */
export async function updateUser(ctx: AuthContext, attributes: UserAttributes): Promise<Result<{ user: User }>> {
  await ctx.session.ready;
  if (!ctx.session.peek()) return { data: null, error: clientError('session_missing', 'Not signed in.') };
  const { currentPassword, ...rest } = attributes;
  const body = currentPassword === undefined ? rest : { ...rest, current_password: currentPassword };
  const res = await callAsUser<User>(ctx, { method: 'PATCH', path: '/v1/auth/user', body });
  if (res.error) return res;
  const user = unwrapUser(res.data);
  await ctx.session.setUser(user);
  return { data: { user }, error: null };
}

/** The server answers the user itself (docs/api.md §5); accept `{user}` too so a server wrapping it does not break clients. */
function unwrapUser(body: User | { user: User }): User {
  return 'user' in body && body.user && typeof body.user === 'object' ? body.user : (body as User);
}

/**
 * Sends the signed-in user a 6-digit code (to the confirmed email, else the phone) to pass as
 * `nonce` to `updateUser` when changing the password or email long after signing in.
 * @example await reauthenticate(ctx); // then: updateUser(ctx, { password: 'new one', nonce: '123456' })
 */
export async function reauthenticate(ctx: AuthContext): Promise<Result<{ sent: true; channel: 'email' | 'sms' }>> {
  await ctx.session.ready;
  if (!ctx.session.peek()) return { data: null, error: clientError('session_missing', 'Not signed in.') };
  return callAsUser<{ sent: true; channel: 'email' | 'sms' }>(ctx, { method: 'POST', path: '/v1/auth/reauthenticate' });
}
