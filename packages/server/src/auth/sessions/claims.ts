/**
 * What the access token says about its user beside the address (GoTrue's claims, which
 * `auth.jwt()` policies and Supabase's clients read): `user_metadata` (the user's own `data`),
 * `app_metadata` (`provider`, `providers`: the identities' providers, always derived; beside them
 * the keys the secret key's admin API set in auth.users.raw_app_meta_data, never user-writable) and
 * `is_anonymous` (no email, no phone, no identity).
 */
export interface UserClaims {
  user_metadata: Record<string, unknown>;
  app_metadata: { provider: string | null; providers: string[]; [key: string]: unknown };
  is_anonymous: boolean;
}

/** The select list of userClaims's inputs; `u` is auth.users. */
export const USER_CLAIMS_SQL = `u.data as user_data, u.raw_app_meta_data as app_data, (u.email is null and u.phone is null
  and not exists (select 1 from auth.identities i where i.user_id = u.id)) as is_anonymous,
  coalesce((select json_agg(i.provider order by i.created_at) from auth.identities i where i.user_id = u.id), '[]'::json) as providers`;

/**
 * The claims of a row read with USER_CLAIMS_SQL.
 * @example userClaims({ user_data: { plan: 'pro' }, is_anonymous: false, providers: ['email'] })
 */
export function userClaims(
  row: { user_data: unknown; app_data?: unknown; is_anonymous: boolean; providers: unknown } | undefined,
): UserClaims {
  const data = row?.user_data;
  const listed = row?.providers;
  const app = row?.app_data;
  const stored = app && typeof app === 'object' && !Array.isArray(app) ? (app as Record<string, unknown>) : {};
  const providers = Array.isArray(listed) ? [...new Set(listed.filter((p): p is string => typeof p === 'string'))] : [];
  return {
    user_metadata: data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {},
    app_metadata: { ...stored, provider: providers[0] ?? (row?.is_anonymous ? 'anonymous' : null), providers },
    is_anonymous: row?.is_anonymous === true,
  };
}
