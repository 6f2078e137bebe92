import { type HttpConfig, type HttpRequest, send } from '../fetch.js';
import type { AuthChangeEvent, Result, Session, User } from '../types.js';
import type { SessionManager } from './session-manager.js';
import { toSession } from './storage.js';

/** What every auth method needs: how to reach the server and where the session lives. */
export interface AuthContext {
  http: HttpConfig;
  session: SessionManager;
  /**
   * Social sign-ins this client started and has not finished yet (their `plinth_flow` marks),
   * where `sessionStorage` is not available (Node); in a browser they live in `sessionStorage`.
   */
  oauthFlows?: Set<string>;
}

/** Result data of every call that signs the user in. */
export interface SignInData {
  user: User;
  session: Session;
  /** Same as `session.access_token`; kept at the top for the spec's `{access_token, user}` shape. */
  access_token: string;
}

/**
 * Sends an auth request and reduces the answer to `{data, error}`.
 * @example const { data, error } = await call<{ user: User }>(ctx, { method: 'POST', path: '/v1/auth/verify-email', body: { token } });
 */
export async function call<T>(ctx: AuthContext, req: HttpRequest): Promise<Result<T>> {
  const res = await send<T>(ctx.http, req);
  return res.error ? { data: null, error: res.error } : { data: res.data, error: null };
}

/**
 * Like `call`, with the current access token (refreshed first when it is about to expire).
 * @example const { data } = await callAsUser<User>(ctx, { path: '/v1/auth/user' });
 */
export async function callAsUser<T>(ctx: AuthContext, req: HttpRequest): Promise<Result<T>> {
  return call<T>(ctx, { ...req, token: await ctx.session.accessToken() });
}

/**
 * Stores the token set of a successful sign-in and returns the SDK's sign-in data.
 * @example return completeSignIn(ctx, await call<Session>(ctx, { method: 'POST', path: '/v1/auth/signin', body }));
 */
export async function completeSignIn(
  ctx: AuthContext,
  res: Result<Session>,
  event: AuthChangeEvent = 'SIGNED_IN',
): Promise<Result<SignInData>> {
  if (res.error) return res;
  const session = toSession(res.data);
  await ctx.session.setSession(session, event);
  return { data: { user: session.user, session, access_token: session.access_token }, error: null };
}
