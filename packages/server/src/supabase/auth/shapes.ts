import type { Factor, Session, User } from '@plinth/shared';
import type { UserClaims } from '../../auth/index.js';

/** GoTrue's user, as auth-js's `User` type reads it. */
export interface GoTrueUser {
  id: string;
  aud: 'authenticated';
  role: 'authenticated';
  email: string;
  phone: string;
  email_confirmed_at?: string;
  phone_confirmed_at?: string;
  confirmed_at?: string;
  last_sign_in_at?: string;
  app_metadata: { provider?: string; providers: string[]; [key: string]: unknown };
  user_metadata: Record<string, unknown>;
  identities: GoTrueIdentity[];
  factors?: GoTrueFactor[];
  created_at: string;
  updated_at: string;
  is_anonymous: boolean;
}

export interface GoTrueIdentity {
  identity_id: string;
  id: string;
  user_id: string;
  identity_data: Record<string, unknown>;
  provider: string;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
  email?: string;
}

export interface GoTrueFactor {
  id: string;
  friendly_name?: string;
  factor_type: 'totp' | 'webauthn';
  status: 'verified' | 'unverified';
  created_at: string;
  updated_at: string;
}

/** What the answer needs beside Plinth's user: its claims (metadata, providers) and factors. */
export interface UserExtras {
  claims: UserClaims | null;
  factors: Factor[];
}

/** The admin-set keys of the claims' app_metadata (provider and providers are derived below). */
function appKept(app: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!app) return {};
  const { provider: _p, providers: _ps, ...rest } = app;
  return rest;
}

/**
 * Plinth's user (packages/shared) in GoTrue's shape: `email`/`phone` '' when absent as GoTrue
 * sends them, timestamps left out when null, `confirmed_at` the first proof, metadata from the
 * claims (a decoy sign-up answer has none: empty), factors only when there are some.
 * @example toGoTrueUser(user, { claims, factors: [] }).app_metadata // { provider: 'email', providers: ['email'] }
 */
export function toGoTrueUser(user: User, extras: UserExtras): GoTrueUser {
  const claims = extras.claims;
  const providers = claims?.app_metadata.providers ?? [...new Set(user.identities.map((i) => i.provider))];
  const provider = claims?.app_metadata.provider ?? providers[0];
  const opt = (key: string, v: string | null) => (v ? { [key]: v } : {});
  return {
    id: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: user.email ?? '',
    phone: user.phone ?? '',
    ...opt('email_confirmed_at', user.email_confirmed_at),
    ...opt('phone_confirmed_at', user.phone_confirmed_at),
    ...opt('confirmed_at', user.email_confirmed_at ?? user.phone_confirmed_at),
    ...opt('last_sign_in_at', user.last_sign_in_at),
    app_metadata: { ...appKept(claims?.app_metadata), ...(provider ? { provider } : {}), providers },
    user_metadata: claims?.user_metadata ?? {},
    identities: user.identities.map((i) => {
      // GoTrue names the email identity by the user id; a provider's by its account id,
      // which Plinth keeps server-side only.
      const id = i.provider === 'email' || i.provider === 'phone' ? user.id : `${i.provider}:${user.id}`;
      return {
        identity_id: id,
        id,
        user_id: user.id,
        identity_data: {
          sub: user.id,
          ...(i.email ? { email: i.email, email_verified: user.email === i.email && !!user.email_confirmed_at } : {}),
        },
        provider: i.provider,
        last_sign_in_at: user.last_sign_in_at,
        created_at: i.created_at,
        updated_at: i.created_at,
        ...(i.email ? { email: i.email } : {}),
      };
    }),
    ...(extras.factors.length ? { factors: extras.factors.map(toGoTrueFactor) } : {}),
    created_at: user.created_at,
    updated_at: user.updated_at,
    is_anonymous: claims?.is_anonymous ?? false,
  };
}

/** A factor in GoTrue's shape. */
export function toGoTrueFactor(f: Factor): GoTrueFactor {
  return {
    id: f.id,
    ...(f.friendly_name ? { friendly_name: f.friendly_name } : {}),
    factor_type: f.factor_type,
    status: f.status,
    created_at: f.created_at,
    updated_at: f.updated_at,
  };
}

/** A Plinth session in GoTrue's shape (the same tokens; the user in GoTrue's shape). */
export function toGoTrueSession(session: Session, extras: UserExtras) {
  return {
    access_token: session.access_token,
    token_type: 'bearer' as const,
    expires_in: session.expires_in,
    expires_at: session.expires_at,
    refresh_token: session.refresh_token,
    user: toGoTrueUser(session.user, extras),
  };
}
