import { clientError } from '../errors.js';
import type { OAuthProvider, Result, Session, User } from '../types.js';
import { type AuthContext, call, type SignInData } from './context.js';
import { parseOAuthFragment, stripFragment } from './fragment.js';
import { isBrowser, toSession } from './storage.js';

export interface SignInWithOAuthOptions {
  /** Page the provider flow returns to, with the tokens in its fragment; must be an allowed redirect URL. Defaults to the current page in a browser. */
  redirectTo?: string;
  /** Return the URL without navigating (always the case outside a browser). */
  skipBrowserRedirect?: boolean;
}

/**
 * Starts social sign-in: navigates to `{url}/v1/auth/oauth/{provider}?redirect_url=…`. Outside
 * a browser (or with `skipBrowserRedirect`) it only returns the URL.
 * @example await signInWithOAuth(ctx, 'github', { redirectTo: 'https://app.example.com/auth/callback' });
 */
export async function signInWithOAuth(
  ctx: AuthContext,
  provider: OAuthProvider,
  options: SignInWithOAuthOptions = {},
): Promise<Result<{ provider: OAuthProvider; url: string }>> {
  const redirectTo = options.redirectTo ?? (isBrowser() ? stripFragment(window.location.href) : undefined);
  const query = redirectTo ? `?redirect_url=${encodeURIComponent(redirectTo)}` : '';
  const url = `${ctx.http.url}/v1/auth/oauth/${encodeURIComponent(provider)}${query}`;
  if (isBrowser() && !options.skipBrowserRedirect) window.location.assign(url);
  return { data: { provider, url }, error: null };
}

/**
 * Finishes social sign-in on the redirect page: reads the tokens from the fragment, fetches the
 * user with them (GET /v1/auth/user), stores the session, emits SIGNED_IN and removes the
 * fragment from the address bar. `url` defaults to the current location (pass one in Node).
 * A fragment with `error=` comes back as `{code: <error>, message: <error_description>, status: 0}`.
 * @example const { data, error } = await handleOAuthCallback(ctx); if (data) console.log(data.user.email);
 */
export async function handleOAuthCallback(ctx: AuthContext, url?: string): Promise<Result<SignInData>> {
  const href = url ?? (isBrowser() ? window.location.href : '');
  const fragment = parseOAuthFragment(href);
  if (fragment.kind === 'none') {
    return { data: null, error: clientError('oauth_callback_missing', 'The URL carries no sign-in tokens or error in its fragment.') };
  }
  if (url === undefined) clearFragment();
  if (fragment.kind === 'error') return { data: null, error: clientError(fragment.error, fragment.error_description) };
  const userRes = await call<User>(ctx, { path: '/v1/auth/user', token: fragment.access_token });
  if (userRes.error) return userRes;
  const session: Session = toSession({ ...fragment, token_type: 'bearer' }, userRes.data);
  // A recovery link that lands here (type=recovery) reads as PASSWORD_RECOVERY, like supabase-js.
  await ctx.session.setSession(session, fragment.type === 'recovery' ? 'PASSWORD_RECOVERY' : 'SIGNED_IN');
  return { data: { user: session.user, session, access_token: session.access_token }, error: null };
}

function clearFragment(): void {
  if (!isBrowser() || typeof history === 'undefined' || typeof history.replaceState !== 'function') return;
  history.replaceState(history.state, '', stripFragment(window.location.href));
}
