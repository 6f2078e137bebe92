import type { Result, Session, User } from '../types.js';
import { type AuthContext, call } from './context.js';

/**
 * The stored session, refreshed first when its access token is about to expire. `session` is
 * null when signed out. No request is made while the token is valid.
 * @example const { data } = await getSession(ctx); const token = data?.session?.access_token;
 */
export async function getSession(ctx: AuthContext): Promise<Result<{ session: Session | null }>> {
  const res = await ctx.session.getValidSession();
  return res.error ? res : { data: { session: res.data }, error: null };
}

/**
 * Rotates the tokens now (POST /v1/auth/refresh) and emits TOKEN_REFRESHED. A refused refresh
 * token (401) signs the client out and emits SIGNED_OUT.
 * @example const { data, error } = await refreshSession(ctx);
 */
export async function refreshSession(ctx: AuthContext): Promise<Result<{ session: Session; user: User }>> {
  await ctx.session.ready;
  const res = await ctx.session.refresh();
  return res.error ? res : { data: { session: res.data, user: res.data.user }, error: null };
}

/**
 * Signs out (POST /v1/auth/signout): `local` (default) ends this session, `global` every session
 * of the user. The local session is removed and SIGNED_OUT emitted even when the server cannot
 * be reached, so the user is never left signed in against their will; such an error is
 * still returned. An already invalid token is not an error.
 * @example await signOut(ctx, { scope: 'global' });
 */
export async function signOut(ctx: AuthContext, options: { scope?: 'local' | 'global' } = {}): Promise<Result<null>> {
  const valid = await ctx.session.getValidSession();
  const token = valid.data?.access_token ?? null;
  let res: Result<unknown> = { data: null, error: null };
  if (token) {
    res = await call<unknown>(ctx, { method: 'POST', path: '/v1/auth/signout', token, body: { scope: options.scope ?? 'local' } });
  }
  await ctx.session.clear();
  if (res.error && res.error.status !== 401) return { data: null, error: res.error };
  return { data: null, error: null };
}
