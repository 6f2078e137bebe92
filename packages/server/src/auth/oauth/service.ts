import { type ErrorCode, isOAuthProvider } from '@plinth/shared';
import * as oidc from 'openid-client';
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso, randomToken, sha256 } from '../../lib/index.js';
import type { AuthSettings } from '../../settings/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SessionService } from '../sessions/service.js';
import { allowedRedirect, normalizeEmail } from '../validate.js';
import type { OAuthEndpoints } from '../../config/index.js';
import { type AnyProvider, type OAuthProvider, PROVIDER_IDS, type Profile, type ProviderContext, type ProviderId } from './provider.js';
import { apple } from './providers/apple.js';
import { github } from './providers/github.js';
import { google } from './providers/google.js';
import { linkedin } from './providers/linkedin.js';
import { microsoft } from './providers/microsoft.js';

const PROVIDERS: Record<ProviderId, AnyProvider> = { google, github, linkedin, microsoft, apple };
const STATE_TTL_SECONDS = 600;
const CLIENT_TTL_MS = 30 * 60 * 1000;
export const BINDING_COOKIE = 'plinth_oauth';
const BINDING = /^[A-Za-z0-9_-]{43}$/;

/** Where the browser goes next: a redirect, and the binding cookie to set with it. */
export interface Redirect {
  location: string;
  setCookie?: string;
}

interface Flow {
  provider: string;
  redirect_url: string;
  code_verifier: string | null;
  nonce: string;
}

/** A failure after the state was trusted: it goes back to the app in the fragment. */
class FlowError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const badState = (why: string) => new ApiError('invalid_state', `The sign-in state is invalid: ${why}. Start the sign-in again.`);

/**
 * Social sign-in (docs/api.md §5): `start` sends the browser to the provider with a signed,
 * single-use, browser-bound state; `callback` trades the code for the provider's user, finds
 * or links or creates ours, opens a session and sends the browser back to the app with the
 * tokens in the fragment.
 * @example const oauth = createOAuthService(deps, sessions, endpoints); const r = await oauth.start('github', url, cookie);
 */
export function createOAuthService(deps: AuthDeps, sessions: SessionService, endpoints: OAuthEndpoints) {
  const { db, clock, settings, tokens, log, accounts } = deps;
  const clients = new Map<ProviderId, { key: string; config: Promise<oidc.Configuration>; at: number }>();
  const secureCookie = new URL(tokens.issuer).protocol === 'https:';
  // Over https the binding cookie is `__Host-` (Secure, Path=/, no Domain): no sibling
  // subdomain and no plain-http page of the host can set it. Plain http (local development)
  // cannot have that guarantee, so there a browser's cookie is never adopted as a binding.
  const cookieName = secureCookie ? `__Host-${BINDING_COOKIE}` : BINDING_COOKIE;
  const cookiePath = secureCookie ? '/' : `${new URL(tokens.issuer).pathname.replace(/\/+$/, '')}/oauth`;

  const redirectUri = (id: ProviderId) => `${tokens.issuer}/oauth/${id}/callback`;
  const context = (id: ProviderId): ProviderContext => ({ ...endpoints[id], now: () => clock.now() });

  function providerSettings(s: AuthSettings, id: ProviderId) {
    return s.providers[id] as AuthSettings['providers'][ProviderId];
  }

  /** The provider and its settings, or 404 provider_not_found / 403 provider_disabled. */
  function lookup(name: string): { provider: AnyProvider; conf: AuthSettings['providers'][ProviderId] } {
    if (!isOAuthProvider(name)) {
      throw new ApiError('provider_not_found', `No social provider "${name.slice(0, 40)}"; use one of ${PROVIDER_IDS.join(', ')}.`);
    }
    const id = name;
    const conf = providerSettings(settings.auth(), id);
    if (!conf.enabled) throw new ApiError('provider_disabled', `Sign-in with ${id} is disabled for this project.`);
    return { provider: PROVIDERS[id], conf };
  }

  /** The provider's client, discovered once and kept for 30 minutes, or until a credential changes. */
  function client(provider: AnyProvider, conf: AuthSettings['providers'][ProviderId]): Promise<oidc.Configuration> {
    const p = provider as OAuthProvider<typeof conf>;
    const key = sha256(p.clientKey(conf));
    const hit = clients.get(p.id);
    const now = clock.now();
    if (hit && hit.key === key && now - hit.at < CLIENT_TTL_MS) return hit.config;
    const entry = { key, config: p.configure(conf, context(p.id)), at: now };
    clients.set(p.id, entry);
    // A provider that was down is asked again next time.
    entry.config.catch(() => clients.get(p.id) === entry && clients.delete(p.id));
    return entry.config;
  }

  function bindingCookie(value: string): string {
    const attrs = [`${cookieName}=${value}`, `Path=${cookiePath}`, `Max-Age=${STATE_TTL_SECONDS}`, 'HttpOnly'];
    // Apple answers with a cross-site POST (form_post): only SameSite=None cookies come along,
    // and those need Secure. Over plain http (local development) Lax is what browsers allow.
    attrs.push(secureCookie ? 'Secure; SameSite=None' : 'SameSite=Lax');
    return attrs.join('; ');
  }

  /**
   * Finds the user for a provider profile, else links by verified email, else creates one.
   * An email the provider does not vouch for is kept on the identity only: it never becomes
   * the account's address, never links, and so never stands in the way of its real owner.
   * Linking to an account whose address was unproven is its first proof (accounts.proveEmail).
   */
  async function userFor(tx: Queryable, id: ProviderId, profile: Profile, now: number): Promise<string> {
    let email: string | null = null;
    try {
      email = profile.email ? normalizeEmail(profile.email) : null;
    } catch {
      email = null; // a provider's odd address is not worth refusing the sign-in over
    }
    const verified = email !== null && profile.emailVerified;
    const name = profile.name?.slice(0, 200) ?? null;
    const avatar = profile.avatar && /^https?:\/\//i.test(profile.avatar) && profile.avatar.length <= 2048 ? profile.avatar : null;
    const identity = { provider: id, providerUserId: profile.id, email };
    const known = await tx.query<{ user_id: string }>(
      'select user_id from auth.identities where provider = $1 and provider_user_id = $2 for update',
      [id, profile.id],
    );
    let userId: string | null = known.rows[0]?.user_id ?? null;
    if (userId) {
      await accounts.updateIdentityEmail(tx, identity);
    } else {
      let created = false;
      if (verified) {
        userId = (await tx.query<{ id: string }>('select id from auth.users where email = $1 for update', [email])).rows[0]?.id ?? null;
      }
      if (!userId) {
        userId = await accounts.createUser(tx, { email: verified ? email : null, emailConfirmed: verified, name, avatar }, now);
        created = userId !== null;
        // Another request made the account with this (verified) email a moment ago: link to it.
        userId ??= (await tx.query<{ id: string }>('select id from auth.users where email = $1 for update', [email])).rows[0]?.id ?? null;
        if (!userId) throw new FlowError('oauth_failed', `${id} sign-in could not be completed; try again.`);
      }
      const owner = await accounts.linkIdentity(tx, userId, identity, now);
      // The same provider account signed in twice at once: the first link wins, and only an
      // account made by this request is dropped (one found by its email stays).
      if (owner !== userId && created) await accounts.deleteUser(tx, userId, now);
      userId = owner;
    }
    if (verified && email) {
      await accounts.proveEmail(tx, userId, email, { identity: { provider: id, providerUserId: profile.id } }, now);
    }
    // Name and picture fill what the user has not set; nothing else is touched.
    await accounts.fillProfile(tx, userId, { name, avatar }, now);
    return userId;
  }

  /** The app page with the tokens, or the error, in its fragment. */
  function back(redirectUrl: string, fields: Record<string, string>): Redirect {
    const url = new URL(redirectUrl);
    url.hash = new URLSearchParams(fields).toString();
    return { location: url.href };
  }

  return {
    /** The name of the browser-binding cookie (`__Host-plinth_oauth` over https). */
    cookieName,
    /** GET /v1/auth/oauth/{provider}?redirect_url=: 302 to the provider's consent screen. */
    async start(name: string, redirectUrl: unknown, cookie: string | null): Promise<Redirect> {
      const { provider, conf } = lookup(name);
      if (typeof redirectUrl !== 'string' || redirectUrl === '') {
        throw new ApiError('invalid_request', 'redirect_url is required: the app page that receives the session.');
      }
      allowedRedirect(settings, redirectUrl, 'redirect_url');
      let config: oidc.Configuration;
      try {
        config = await client(provider, conf);
      } catch (err) {
        log.warn({ provider: provider.id, err: (err as Error).message }, 'oauth: provider configuration failed');
        throw new ApiError('oauth_failed', `${provider.id} could not be reached or is misconfigured; try again later.`, undefined, {
          status: 502,
        });
      }
      // Adopting a cookie the browser already has lets two sign-ins run in one browser; only a
      // `__Host-` cookie can be trusted not to have been planted (login CSRF).
      const binding = secureCookie && cookie && BINDING.test(cookie) ? cookie : randomToken(32);
      const jti = randomToken(32);
      const nonce = oidc.randomNonce();
      const verifier = provider.pkce ? oidc.randomPKCECodeVerifier() : null;
      const now = clock.now();
      // One statement: the flow is recorded and abandoned ones are cleared.
      await db.query(
        `with gone as (delete from auth.oauth_flows where expires_at < $8::timestamptz)
         insert into auth.oauth_flows (id, provider, redirect_url, code_verifier, nonce, binding, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7::timestamptz)`,
        [sha256(jti), provider.id, redirectUrl, verifier, nonce, sha256(binding), iso(now + STATE_TTL_SECONDS * 1000), iso(now)],
      );
      const state = await tokens.signState({ jti, p: provider.id, r: redirectUrl }, STATE_TTL_SECONDS);
      const params: Record<string, string> = {
        ...provider.authParams,
        redirect_uri: redirectUri(provider.id),
        response_type: 'code',
        state,
      };
      if (provider.oidc) params.nonce = nonce;
      if (verifier) {
        params.code_challenge = await oidc.calculatePKCECodeChallenge(verifier);
        params.code_challenge_method = 'S256';
      }
      const location = oidc.buildAuthorizationUrl(config, params).href;
      return { location, setCookie: binding === cookie ? undefined : bindingCookie(binding) };
    },

    /**
     * GET or POST /v1/auth/oauth/{provider}/callback. A bad, expired, reused or foreign state
     * is 400 invalid_state (nothing trustworthy to redirect to); every later failure goes back
     * to the app as `#error=<code>&error_description=…`.
     */
    async callback(name: string, params: Record<string, string>, cookie: string | null, who: ClientInfo): Promise<Redirect> {
      if (!isOAuthProvider(name)) throw new ApiError('provider_not_found', `No social provider "${name.slice(0, 40)}".`);
      const id = name;
      const state = params.state;
      if (!state || state.length > 4096) throw badState('it is missing');
      const payload = await tokens.verifyState(state);
      if (!payload || typeof payload.jti !== 'string' || payload.p !== id || typeof payload.r !== 'string') {
        throw badState('it was not issued here for this provider, or it expired');
      }
      // Redeemed only with the browser's cookie (its hash is looked up, like every token here):
      // a callback URL replayed from elsewhere leaves the flow to the browser that owns it.
      const flowId = sha256(payload.jti);
      const { rows } = await db.query<Flow>(
        `delete from auth.oauth_flows where id = $1 and binding = $2 and expires_at > $3::timestamptz
         returning provider, redirect_url, code_verifier, nonce`,
        [flowId, sha256(cookie ?? ''), iso(clock.now())],
      );
      const flow = rows[0];
      if (!flow) {
        const pending = await db.query('select 1 from auth.oauth_flows where id = $1 and expires_at > $2::timestamptz', [
          flowId,
          iso(clock.now()),
        ]);
        throw badState(pending.rows.length ? 'the sign-in was started in another browser' : 'it was already used or expired');
      }
      if (flow.provider !== id || flow.redirect_url !== payload.r) throw badState('it does not match its sign-in');

      try {
        if (params.error) {
          const why = (params.error_description || params.error).slice(0, 300);
          throw new FlowError('oauth_failed', `${id} did not authorize the sign-in: ${why}`);
        }
        if (!params.code) throw new FlowError('oauth_failed', `${id} sent no authorization code.`);
        const conf = providerSettings(settings.auth(), id);
        if (!conf.enabled) throw new FlowError('provider_disabled', `Sign-in with ${id} is disabled for this project.`);
        const provider = PROVIDERS[id];
        let profile: Profile;
        try {
          const config = await client(provider, conf);
          const current = new URL(redirectUri(id));
          current.searchParams.set('code', params.code);
          current.searchParams.set('state', state);
          if (params.iss) current.searchParams.set('iss', params.iss);
          const tokenSet = await oidc.authorizationCodeGrant(config, current, {
            expectedState: state,
            ...(flow.code_verifier ? { pkceCodeVerifier: flow.code_verifier } : {}),
            ...(provider.oidc ? { expectedNonce: flow.nonce, idTokenExpected: true } : {}),
          });
          profile = await provider.profile(config, tokenSet, params, context(id));
        } catch (err) {
          log.warn({ provider: id, err: (err as Error).message, code: (err as { code?: string }).code }, 'oauth: code exchange failed');
          throw new FlowError('oauth_failed', `${id} sign-in could not be completed; try again.`);
        }
        const session = await sessions.signInWith(who, (tx, now) => userFor(tx, id, profile, now));
        return back(flow.redirect_url, {
          access_token: session.access_token,
          refresh_token: session.refresh_token,
          token_type: 'bearer',
          expires_in: String(session.expires_in),
          expires_at: String(session.expires_at),
        });
      } catch (err) {
        // A banned user goes back to the app like any other refusal after the state was trusted.
        if (err instanceof ApiError && err.code === 'user_banned')
          return back(flow.redirect_url, { error: err.code, error_description: err.message });
        if (!(err instanceof FlowError)) throw err;
        return back(flow.redirect_url, { error: err.code, error_description: err.message });
      }
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
