/** Tokens or error carried in the fragment of the final social sign-in redirect (docs/api.md §5). */
export type OAuthFragment =
  | { kind: 'tokens'; access_token: string; refresh_token: string; expires_in: number; token_type: string; type: string | null }
  | { kind: 'error'; error: string; error_description: string }
  | { kind: 'none' };

/**
 * Reads `#access_token=…&refresh_token=…&token_type=bearer&expires_in=…` or
 * `#error=…&error_description=…`. Accepts a whole URL or just its hash; anything else (no
 * fragment, a router's `#/path`) is `none`, so apps can call the handler on every page load.
 * @example parseOAuthFragment('https://app.example.com/cb#error=access_denied&error_description=Cancelled')
 *   // { kind: 'error', error: 'access_denied', error_description: 'Cancelled' }
 */
export function parseOAuthFragment(urlOrHash: string): OAuthFragment {
  const hashAt = urlOrHash.indexOf('#');
  const fragment = hashAt === -1 ? '' : urlOrHash.slice(hashAt + 1);
  if (fragment === '') return { kind: 'none' };
  const params = new URLSearchParams(fragment);
  const error = params.get('error');
  if (error) return { kind: 'error', error, error_description: params.get('error_description') ?? error };
  const accessToken = params.get('access_token');
  const refreshToken = params.get('refresh_token');
  if (!accessToken || !refreshToken) return { kind: 'none' };
  const expiresIn = Number(params.get('expires_in'));
  return {
    kind: 'tokens',
    access_token: accessToken,
    refresh_token: refreshToken,
    // A missing or mangled lifetime is treated as already expired, so the first request refreshes.
    expires_in: Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(expiresIn) : 0,
    token_type: params.get('token_type') ?? 'bearer',
    type: params.get('type'),
  };
}

/**
 * The URL without its fragment, for `history.replaceState`: tokens must not stay in the
 * address bar, the history or a bookmarked link.
 * @example stripFragment('https://app.example.com/cb?x=1#access_token=t') // 'https://app.example.com/cb?x=1'
 */
export function stripFragment(url: string): string {
  const hashAt = url.indexOf('#');
  return hashAt === -1 ? url : url.slice(0, hashAt);
}
