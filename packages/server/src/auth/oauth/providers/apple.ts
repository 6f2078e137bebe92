import { importPKCS8, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import type { AppleProviderSettings } from '../../../settings/index.js';
import { discover, idClaims, type OAuthProvider, type Profile, standardProfile, str } from '../provider.js';

const ISSUER = 'https://appleid.apple.com';
/** Apple accepts a client secret for at most six months; ours lives one hour and is remade. */
const SECRET_TTL_SECONDS = 3600;

/**
 * Sign in with Apple. Quirks:
 * - the client id is the Services ID, and the client secret is a JWT we sign (ES256) with the
 *   .p8 key: `iss` team id, `sub` services id, `aud` https://appleid.apple.com, `kid` key id;
 * - asking for `name email` requires `response_mode=form_post`: the callback is a POST;
 * - the name comes only on the first authorization, as the JSON `user` field of that POST;
 * - the email may be a private relay address (…@privaterelay.appleid.com), and
 *   `email_verified` may be the string "true".
 */
export const apple: OAuthProvider<AppleProviderSettings> = {
  id: 'apple',
  pkce: false,
  oidc: true,
  authParams: { scope: 'openid name email', response_mode: 'form_post' },
  // The secret is remade hourly: the cached client must be too.
  clientKey: (s) => `${s.service_id}:${s.team_id}:${s.key_id}:${s.private_key}`,
  async configure(s, ctx) {
    const key = await importPKCS8(s.private_key ?? '', 'ES256');
    const now = Math.floor(ctx.now() / 1000);
    const secret = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: s.key_id ?? '' })
      .setIssuer(s.team_id ?? '')
      .setSubject(s.service_id ?? '')
      .setAudience(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + SECRET_TTL_SECONDS)
      .sign(key);
    return discover(ISSUER, s.service_id ?? '', oidc.ClientSecretPost(secret), ctx.baseUrl);
  },
  async profile(_config, tokens, params) {
    return { ...fromClaims(idClaims(tokens)), name: nameFromUserField(params.user) };
  },
  // A native app's ID token (Sign in with Apple on iOS): no name there, Apple sends it to the app.
  idTokenProfile: fromClaims,
};

/** Apple's ID token carries no name (the first sign-in's form does) and no picture. */
function fromClaims(c: Record<string, unknown>): Profile {
  return { ...standardProfile(c), name: null, avatar: null };
}

/** `{"name":{"firstName":"Ada","lastName":"Lovelace"}}` → "Ada Lovelace"; anything else → null. */
function nameFromUserField(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    const name = (JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } }).name;
    const parts = [str(name?.firstName), str(name?.lastName)].filter((p): p is string => p !== null);
    return parts.length ? parts.join(' ').slice(0, 200) : null;
  } catch {
    return null;
  }
}
