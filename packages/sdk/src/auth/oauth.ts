import { clientError } from '../errors.js';
import type { OAuthProvider, PlinthErrorCode, Result, Session, User } from '../types.js';
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
 * The query parameter that ties the page the provider flow returns to with the sign-in this
 * client started. Without it, anyone could send a victim's browser to the app's callback page
 * with THEIR tokens in the fragment and sign the victim in as them (login CSRF).
 */
export const FLOW_PARAM = 'plinth_flow';
const FLOWS_KEY = 'plinth.oauth.flows';
const MAX_FLOWS = 5;

/** This tab's pending flows: `sessionStorage` in a browser (it survives the trip to the provider), else the client's memory. */
function flows(ctx: AuthContext): { add(flow: string): void; take(flow: string): boolean } {
  const storage = isBrowser() ? sessionStorageOrNull() : null;
  if (!storage) {
    const set = (ctx.oauthFlows ??= new Set());
    return {
      add: (flow) => {
        set.add(flow);
        if (set.size > MAX_FLOWS) set.delete(set.values().next().value as string);
      },
      take: (flow) => set.delete(flow),
    };
  }
  const read = (): string[] => {
    try {
      const v = JSON.parse(storage.getItem(FLOWS_KEY) ?? '[]');
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  };
  return {
    add: (flow) => storage.setItem(FLOWS_KEY, JSON.stringify([...read(), flow].slice(-MAX_FLOWS))),
    take: (flow) => {
      const all = read();
      if (!all.includes(flow)) return false;
      storage.setItem(FLOWS_KEY, JSON.stringify(all.filter((f) => f !== flow)));
      return true;
    },
  };
}

function sessionStorageOrNull(): Storage | null {
  try {
    return (globalThis as { sessionStorage?: Storage }).sessionStorage ?? null;
  } catch {
    return null;
  }
}

function randomFlow(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Starts social sign-in: navigates to `{url}/v1/auth/oauth/{provider}?redirect_url=…`. The
 * redirect URL gets a `plinth_flow` mark that `handleOAuthCallback` checks (the allowlist
 * ignores the query). Outside a browser (or with `skipBrowserRedirect`) it only returns the URL.
 * @example await signInWithOAuth(ctx, 'github', { redirectTo: 'https://app.example.com/auth/callback' });
 */
export async function signInWithOAuth(
  ctx: AuthContext,
  provider: OAuthProvider,
  options: SignInWithOAuthOptions = {},
): Promise<Result<{ provider: OAuthProvider; url: string }>> {
  const base = options.redirectTo ?? (isBrowser() ? stripFragment(window.location.href) : undefined);
  let query = '';
  if (base) {
    let target: URL;
    try {
      target = new URL(base);
    } catch {
      return { data: null, error: clientError('invalid_redirect', 'redirectTo must be an absolute URL.') };
    }
    const flow = randomFlow();
    target.searchParams.set(FLOW_PARAM, flow);
    flows(ctx).add(flow);
    query = `?redirect_url=${encodeURIComponent(target.href)}`;
  }
  const url = `${ctx.http.url}/v1/auth/oauth/${encodeURIComponent(provider)}${query}`;
  if (isBrowser() && !options.skipBrowserRedirect) window.location.assign(url);
  return { data: { provider, url }, error: null };
}

/**
 * Finishes social sign-in on the redirect page: checks that this client started the sign-in
 * (its `plinth_flow` mark, used once), reads the tokens from the fragment, fetches the user with
 * them (GET /v1/auth/user), stores the session, emits SIGNED_IN and removes the fragment and the
 * mark from the address bar. `url` defaults to the current location (pass one in Node).
 * A fragment with `error=` comes back as `{code: <error>, message: <error_description>, status: 0}`;
 * tokens for a sign-in this client did not start as `oauth_flow_mismatch`.
 * @example const { data, error } = await handleOAuthCallback(ctx); if (data) console.log(data.user.email);
 */
export async function handleOAuthCallback(ctx: AuthContext, url?: string): Promise<Result<SignInData>> {
  const href = url ?? (isBrowser() ? window.location.href : '');
  const fragment = parseOAuthFragment(href);
  if (fragment.kind === 'none') {
    return { data: null, error: clientError('oauth_callback_missing', 'The URL carries no sign-in tokens or error in its fragment.') };
  }
  const flow = flowOf(href);
  if (url === undefined) clearFragment();
  // The server puts one of its codes there (oauth_failed, provider_disabled, user_banned).
  if (fragment.kind === 'error') return { data: null, error: clientError(fragment.error as PlinthErrorCode, fragment.error_description) };
  if (!flow || !flows(ctx).take(flow)) {
    return {
      data: null,
      error: clientError(
        'oauth_flow_mismatch',
        'These sign-in tokens are not from a sign-in this browser tab started (signInWithOAuth); they were not used.',
      ),
    };
  }
  const userRes = await call<User>(ctx, { path: '/v1/auth/user', token: fragment.access_token });
  if (userRes.error) return userRes;
  const session: Session = toSession({ ...fragment, token_type: 'bearer' }, userRes.data);
  // A recovery link that lands here (type=recovery) reads as PASSWORD_RECOVERY, like supabase-js.
  await ctx.session.setSession(session, fragment.type === 'recovery' ? 'PASSWORD_RECOVERY' : 'SIGNED_IN');
  return { data: { user: session.user, session, access_token: session.access_token }, error: null };
}

function flowOf(href: string): string | null {
  try {
    return new URL(href).searchParams.get(FLOW_PARAM);
  } catch {
    return null;
  }
}

/** The URL without its fragment and without the flow mark. */
function cleanUrl(href: string): string {
  const bare = stripFragment(href);
  try {
    const u = new URL(bare);
    if (!u.searchParams.has(FLOW_PARAM)) return bare;
    u.searchParams.delete(FLOW_PARAM);
    return u.href;
  } catch {
    return bare;
  }
}

function clearFragment(): void {
  if (!isBrowser() || typeof history === 'undefined' || typeof history.replaceState !== 'function') return;
  history.replaceState(history.state, '', cleanUrl(window.location.href));
}
