import { isOAuthProvider, type OidcProviderSettings, type OidcTestResult, type Session } from '@plinth/shared';
import * as oidc from 'openid-client';
import type { OAuthEndpoints } from '../../config/index.js';
import { ApiError } from '../../http/index.js';
import { iso, randomToken, sha256 } from '../../lib/index.js';
import type { AuthSettings } from '../../settings/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { type PkceChallenge, pkceRefused } from '../one-time.js';
import type { SessionService } from '../sessions/service.js';
import { allowedRedirect } from '../validate.js';
import { type IdTokenGrant, verifyGrantToken } from './id-token-grant.js';
import { attachIdentity, userFor } from './link.js';
import { allowedAlgs, type OidcDiscovery, OidcProblem } from './oidc/discovery.js';
import { IdTokenProblem, verifyIdToken } from './oidc/id-token.js';
import {
  type AnyProvider,
  FlowError,
  type OAuthProvider,
  PROVIDER_IDS,
  type Profile,
  type ProviderContext,
  type TokenResponse,
} from './provider.js';
import { apple } from './providers/apple.js';
import { github } from './providers/github.js';
import { google } from './providers/google.js';
import { linkedin } from './providers/linkedin.js';
import { microsoft } from './providers/microsoft.js';
import { oidcProvider, readClaims } from './providers/oidc.js';
import { testOutcome, testSignins } from './test-signin.js';

const BUILT_IN: Record<string, AnyProvider> = { google, github, linkedin, microsoft, apple };
const STATE_TTL_SECONDS = 600;
/** A PKCE flow's `?code=` (GoTrue's flow state lives five minutes too). */
const CODE_TTL_SECONDS = 300;
/** The authorization parameters a GoTrue app may not set through `queryParams`: the flow's own. */
const RESERVED_PARAMS = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'state',
  'nonce',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'request',
  'request_uri',
  'registration',
]);
const CLIENT_TTL_MS = 30 * 60 * 1000;
/** The ID token grant asks a provider's JWKS again for an unknown `kid` at most once in this time. */
const GRANT_REFRESH_MS = 60 * 1000;
export const BINDING_COOKIE = 'plinth_oauth';
const BINDING = /^[A-Za-z0-9_-]{43}$/;
/** The console page that shows a test sign-in's result (docs/api.md, "Test sign-in"). */
const TEST_RESULT_PAGE = '/console/auth/oidc-test';

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
  /** 'gotrue': started on /auth/v1 (GoTrue's parameters and answers); null: /v1/auth. */
  face: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  link_user_id: string | null;
  link_session_id: string | null;
}

/**
 * A flow started on /auth/v1 (`GET /authorize`, or `GET /user/identities/authorize` for `link`):
 * GoTrue's `scopes` and `queryParams`, the app's PKCE challenge (the callback then answers a
 * `?code=` for POST /token?grant_type=pkce instead of tokens), and for a link the user and
 * session that started it.
 */
export interface FaceStart {
  redirectTo: string;
  scopes?: string;
  queryParams?: Record<string, string>;
  pkce?: PkceChallenge;
  link?: { userId: string; sessionId: string };
}

/** What POST /auth/v1/token?grant_type=pkce gives for a social sign-in's code. */
export interface Redeemed {
  session: Session;
  providerToken: string | null;
  providerRefreshToken: string | null;
}

type ProviderConf = AuthSettings['providers'][keyof AuthSettings['providers']] | OidcProviderSettings;

/** A provider by its id: a built-in one, or one of `oidc_providers` (then `oidc` is its settings). */
interface Resolved {
  provider: AnyProvider;
  conf: ProviderConf;
  oidc: OidcProviderSettings | null;
}

/** An error's message with its cause's (openid-client says "unexpected JWT claim value encountered", its cause which claim). */
function reason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const own = (err as Error).message;
  return cause instanceof Error && cause.message && cause.message !== own ? `${own}: ${cause.message}` : own;
}

const badState = (why: string) => new ApiError('invalid_state', `The sign-in state is invalid: ${why}. Start the sign-in again.`);

/** A PKCE flow's code row (auth.oauth_codes) as the exchange reads it. */
interface CodeRow {
  provider: string;
  profile: Profile;
  provider_token: string | null;
  provider_refresh_token: string | null;
  code_challenge: string;
  code_challenge_method: string;
  link_user_id: string | null;
  link_session_id: string | null;
  live: boolean;
}

/** GoTrue's `queryParams` passed on to the provider (at most 20, short), never the flow's own parameters. */
function forwarded(extra: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(extra ?? {}).slice(0, 20)) {
    if (!RESERVED_PARAMS.has(k.toLowerCase()) && /^[A-Za-z0-9_.-]{1,64}$/.test(k) && v.length <= 512) out[k] = v;
  }
  return out;
}

/** The provider's scopes and the app's (`scopes`: space- or comma-separated), once each. */
function mergeScopes(base: string | undefined, extra: string): string {
  const all = [...(base ?? '').split(/[\s,]+/), ...extra.split(/[\s,]+/)].filter((x) => /^[\x21-\x7e]{1,200}$/.test(x));
  return [...new Set(all)].slice(0, 30).join(' ');
}

/** A GoTrue redirect: `fields` in the query (a PKCE flow's code or error) or in the fragment. */
function goTrueBack(redirectUrl: string, query: boolean, fields: Record<string, string>): Redirect {
  const url = new URL(redirectUrl);
  if (query) for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
  else url.hash = new URLSearchParams(fields).toString();
  return { location: url.href };
}

/**
 * Social sign-in (docs/api.md §5.3): `start` sends the browser to the provider with a signed,
 * single-use, browser-bound state; `callback` trades the code for the provider's user (the ID
 * token's signature checked against the provider's JWKS), finds or links or creates ours, opens
 * a session and sends the browser back to the app with the tokens in the fragment. The same
 * path serves the built-in providers and those of `oidc_providers`, and the admins' test
 * sign-ins of the latter (`startTest`, `testResult`), which sign nobody in.
 * @example const oauth = createOAuthService(deps, sessions, endpoints, discovery); const r = await oauth.start('github', url, cookie);
 */
export function createOAuthService(deps: AuthDeps, sessions: SessionService, endpoints: OAuthEndpoints, discovery: OidcDiscovery) {
  const { db, clock, settings, tokens, log, accounts } = deps;
  const clients = new Map<string, { key: string; config: Promise<oidc.Configuration>; at: number }>();
  /**
   * When the ID token grant last asked a provider's JWKS again for a `kid` it lacked: anyone may
   * post tokens there, so an unknown `kid` sends at most one such request a minute per key set
   * (a real key rotation is followed within the minute).
   */
  const grantRefreshes = new Map<string, number>();
  const tests = testSignins(db);
  const secureCookie = new URL(tokens.issuer).protocol === 'https:';
  // Over https the binding cookie is `__Host-` (Secure, Path=/, no Domain): no sibling
  // subdomain and no plain-http page of the host can set it. Plain http (local development)
  // cannot have that guarantee, so there a browser's cookie is never adopted as a binding.
  const cookieName = secureCookie ? `__Host-${BINDING_COOKIE}` : BINDING_COOKIE;
  const cookiePath = secureCookie ? '/' : `${new URL(tokens.issuer).pathname.replace(/\/+$/, '')}/oauth`;
  const publicUrl = tokens.issuer.replace(/\/v1\/auth$/, '');

  const redirectUri = (id: string) => `${tokens.issuer}/oauth/${id}/callback`;
  /** GoTrue's one callback for every provider (the provider is in the state): what Supabase projects register at their providers. */
  const faceCallbackUri = `${publicUrl}/auth/v1/callback`;
  const faceCookiePath = secureCookie ? '/' : `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/auth/v1`;
  const context = (id: string): ProviderContext => ({
    ...(isOAuthProvider(id) ? endpoints[id] : { baseUrl: null, apiUrl: null }),
    now: () => clock.now(),
  });

  /** The provider named `name`, or 404 provider_not_found; with `enabledOnly`, 403 provider_disabled when it is off. */
  function resolve(name: string, enabledOnly: boolean): Resolved {
    const s = settings.auth();
    let r: Resolved;
    if (isOAuthProvider(name)) {
      r = { provider: BUILT_IN[name], conf: s.providers[name], oidc: null };
    } else {
      const conf = s.oidc_providers.find((p) => p.id === name);
      if (!conf) {
        // Not the project's other ids: a disabled provider is nobody's business (GET /v1/auth/settings lists the enabled ones).
        throw new ApiError(
          'provider_not_found',
          `No provider "${name.slice(0, 40)}": use ${PROVIDER_IDS.join(', ')}, or an OpenID Connect provider of this project (GET /v1/auth/settings).`,
        );
      }
      r = { provider: oidcProvider(conf, discovery), conf, oidc: conf };
    }
    if (enabledOnly && !r.conf.enabled) throw new ApiError('provider_disabled', `Sign-in with ${name} is disabled for this project.`);
    return r;
  }

  /**
   * The provider's client. Built-in ones: discovered by openid-client, kept 30 minutes or until a
   * credential changes. `oidc_providers`: from the discovery cache, which follows the document's
   * own caching headers, so nothing is kept here.
   */
  function client(r: Resolved): Promise<oidc.Configuration> {
    const p = r.provider as OAuthProvider<ProviderConf>;
    if (r.oidc) return p.configure(r.conf, context(p.id));
    const key = sha256(p.clientKey(r.conf));
    const hit = clients.get(p.id);
    const now = clock.now();
    if (hit && hit.key === key && now - hit.at < CLIENT_TTL_MS) return hit.config;
    const entry = { key, config: p.configure(r.conf, context(p.id)), at: now };
    clients.set(p.id, entry);
    // A provider that was down is asked again next time.
    entry.config.catch(() => clients.get(p.id) === entry && clients.delete(p.id));
    return entry.config;
  }

  /** The client, or the start's answer when the provider cannot be used: 502 with oidc_* or oauth_failed. */
  async function clientOrFail(r: Resolved): Promise<oidc.Configuration> {
    try {
      return await client(r);
    } catch (err) {
      log.warn({ provider: r.provider.id, err: (err as Error).message }, 'oauth: provider configuration failed');
      if (err instanceof OidcProblem) {
        throw new ApiError(err.code, `${r.provider.id} cannot be used now: ${err.message}.`, undefined, { status: 502 });
      }
      throw new ApiError('oauth_failed', `${r.provider.id} could not be reached or is misconfigured; try again later.`, undefined, {
        status: 502,
      });
    }
  }

  function bindingCookie(value: string, path = cookiePath): string {
    const attrs = [`${cookieName}=${value}`, `Path=${path}`, `Max-Age=${STATE_TTL_SECONDS}`, 'HttpOnly'];
    // Apple answers with a cross-site POST (form_post): only SameSite=None cookies come along,
    // and those need Secure. Over plain http (local development) Lax is what browsers allow.
    attrs.push(secureCookie ? 'Secure; SameSite=None' : 'SameSite=Lax');
    return attrs.join('; ');
  }

  /** Records a flow and builds the provider's authorization URL for it. `test`: the test sign-in it is. */
  async function begin(
    r: Resolved,
    config: oidc.Configuration,
    redirectUrl: string,
    binding: string,
    test: string | null,
    face: FaceStart | null = null,
  ): Promise<string> {
    const { provider } = r;
    const jti = randomToken(32);
    const nonce = oidc.randomNonce();
    const verifier = provider.pkce ? oidc.randomPKCECodeVerifier() : null;
    const now = clock.now();
    // One statement: the flow is recorded and abandoned ones are cleared.
    await db.query(
      `with gone as (delete from auth.oauth_flows where expires_at < $8::timestamptz)
       insert into auth.oauth_flows (id, provider, redirect_url, code_verifier, nonce, binding, expires_at,
         face, code_challenge, code_challenge_method, link_user_id, link_session_id)
       values ($1, $2, $3, $4, $5, $6, $7::timestamptz, $9, $10, $11, $12, $13)`,
      [
        sha256(jti),
        provider.id,
        redirectUrl,
        verifier,
        nonce,
        sha256(binding),
        iso(now + STATE_TTL_SECONDS * 1000),
        iso(now),
        face ? 'gotrue' : null,
        face?.pkce?.challenge ?? null,
        face?.pkce?.method ?? null,
        face?.link?.userId ?? null,
        face?.link?.sessionId ?? null,
      ],
    );
    const state = await tokens.signState(
      { jti, p: provider.id, r: redirectUrl, ...(test ? { t: test } : {}), ...(face ? { f: 'gotrue' } : {}) },
      STATE_TTL_SECONDS,
    );
    const params: Record<string, string> = {
      ...(face ? forwarded(face.queryParams) : {}),
      ...provider.authParams,
      redirect_uri: face ? faceCallbackUri : redirectUri(provider.id),
      response_type: 'code',
      state,
    };
    if (face?.scopes) params.scope = mergeScopes(provider.authParams.scope, face.scopes);
    if (provider.oidc) params.nonce = nonce;
    if (verifier) {
      params.code_challenge = await oidc.calculatePKCECodeChallenge(verifier);
      params.code_challenge_method = 'S256';
    }
    return oidc.buildAuthorizationUrl(config, params).href;
  }

  /**
   * Trades the code for tokens. openid-client checks the token response and the ID token's
   * claims (issuer, audience, azp, expiry, nonce); it does not check an ID token's signature in
   * the code flow, so we do, with jose against the provider's JWKS (oidc/id-token.ts), which
   * also checks the claims again, with the algorithm allowlist.
   */
  async function exchange(r: Resolved, config: oidc.Configuration, params: Record<string, string>, state: string, flow: Flow) {
    const current = new URL(flow.face ? faceCallbackUri : redirectUri(r.provider.id));
    current.searchParams.set('code', params.code);
    current.searchParams.set('state', state);
    if (params.iss) current.searchParams.set('iss', params.iss);
    const tokenSet = await oidc.authorizationCodeGrant(config, current, {
      expectedState: state,
      ...(flow.code_verifier ? { pkceCodeVerifier: flow.code_verifier } : {}),
      ...(r.provider.oidc ? { expectedNonce: flow.nonce, idTokenExpected: true } : {}),
    });
    if (r.provider.oidc) await checkSignature(r, config, tokenSet, flow.nonce);
    return tokenSet;
  }

  async function checkSignature(r: Resolved, config: oidc.Configuration, tokenSet: TokenResponse, nonce: string) {
    const meta = config.serverMetadata();
    if (!tokenSet.id_token) throw new IdTokenProblem('the provider sent no ID token');
    if (!meta.jwks_uri) throw new IdTokenProblem('the provider has no jwks_uri to verify the ID token with');
    const jwksUri = meta.jwks_uri;
    await verifyIdToken(tokenSet.id_token, {
      algorithms: allowedAlgs(meta),
      keys: (refresh) => discovery.keys(jwksUri, { ...(refresh ? { refresh: true } : { allowStale: true }), builtIn: !r.oidc }),
      // Microsoft's issuer is a template (…/{tenantid}/v2.0) that openid-client fills from the
      // token; for the built-in providers openid-client's issuer check is the one that counts.
      expect: { issuer: r.oidc?.issuer ?? null, clientId: config.clientMetadata().client_id, nonce },
    });
  }

  /** The app page with the tokens, or the error, in its fragment. */
  function back(redirectUrl: string, fields: Record<string, string>): Redirect {
    const url = new URL(redirectUrl);
    url.hash = new URLSearchParams(fields).toString();
    return { location: url.href };
  }

  /** The end of a test sign-in: what the provider sent is stored for the console, nobody is signed in. */
  async function finishTest(testId: string, id: string, params: Record<string, string>, state: string, flow: Flow): Promise<Redirect> {
    const page = { location: flow.redirect_url };
    const fail = async (code: string, message: string) => {
      await tests.finish(testId, 'failed', { error: { code, message } }, clock.now());
      return page;
    };
    if (params.error)
      return fail(
        'oauth_failed',
        `The provider did not authorize the sign-in: ${(params.error_description || params.error).slice(0, 300)}`,
      );
    if (!params.code) return fail('oauth_failed', 'The provider sent no authorization code.');
    let r: Resolved;
    try {
      r = resolve(id, false);
    } catch {
      return fail('provider_not_found', `The provider ${id} was removed from the settings during the test.`);
    }
    const issuer = (r.oidc as OidcProviderSettings).issuer;
    try {
      const config = await client(r);
      const tokenSet = await exchange(r, config, params, state, flow);
      const outcome = testOutcome(issuer, await readClaims(config, tokenSet, 'always'));
      await tests.finish(testId, 'done', outcome, clock.now());
      return page;
    } catch (err) {
      log.warn({ provider: id, err: reason(err) }, 'oauth: test sign-in failed');
      const code = err instanceof OidcProblem ? err.code : 'oauth_failed';
      // For the admin only (the management API): what exactly the provider got wrong.
      return fail(code, reason(err).slice(0, 500));
    }
  }

  /**
   * The flow a callback's state names, checked and used up: signed here, for this provider
   * (`id`; null on /auth/v1/callback, where the state names it), of this face, redeemed once, in
   * the browser that started it (its cookie's hash; a link flow and a test sign-in are not
   * browser-bound). Else 400 invalid_state.
   */
  async function trustedFlow(id: string | null, params: Record<string, string>, cookie: string | null) {
    const state = params.state;
    if (!state || state.length > 4096) throw badState('it is missing');
    const payload = await tokens.verifyState(state);
    const face = id === null;
    if (
      !payload ||
      typeof payload.jti !== 'string' ||
      typeof payload.p !== 'string' ||
      (id !== null && payload.p !== id) ||
      typeof payload.r !== 'string' ||
      (payload.f === 'gotrue') !== face
    ) {
      throw badState('it was not issued here for this provider, or it expired');
    }
    const provider = payload.p;
    const test = typeof payload.t === 'string' ? payload.t : null;
    // Redeemed only with the browser's cookie (its hash is looked up, like every token here):
    // a callback URL replayed from elsewhere leaves the flow to the browser that owns it. A
    // test sign-in signs nobody in, and its result is for the management API only: any browser
    // may finish it (the admin may open its URL wherever they are signed in at the provider).
    // A link's result is a code that only its starter's verifier redeems (redeem).
    const flowId = sha256(payload.jti);
    const { rows } = await db.query<Flow>(
      `delete from auth.oauth_flows where id = $1 and ($4::boolean or binding = $2 or link_user_id is not null)
         and expires_at > $3::timestamptz
       returning provider, redirect_url, code_verifier, nonce, face, code_challenge, code_challenge_method, link_user_id, link_session_id`,
      [flowId, sha256(cookie ?? ''), iso(clock.now()), test !== null],
    );
    const flow = rows[0];
    if (!flow) {
      const pending = await db.query('select 1 from auth.oauth_flows where id = $1 and expires_at > $2::timestamptz', [
        flowId,
        iso(clock.now()),
      ]);
      throw badState(pending.rows.length ? 'the sign-in was started in another browser' : 'it was already used or expired');
    }
    if (flow.provider !== provider || flow.redirect_url !== payload.r || (flow.face === 'gotrue') !== face) {
      throw badState('it does not match its sign-in');
    }
    return { flow, state, test, id: provider };
  }

  /** The provider's user of a trusted flow (the code traded, the ID token checked); a FlowError when it cannot be had. */
  async function providerProfile(id: string, params: Record<string, string>, state: string, flow: Flow) {
    if (params.error) {
      const why = (params.error_description || params.error).slice(0, 300);
      throw new FlowError('oauth_failed', `${id} did not authorize the sign-in: ${why}`);
    }
    if (!params.code) throw new FlowError('oauth_failed', `${id} sent no authorization code.`);
    let r: Resolved;
    try {
      r = resolve(id, true);
    } catch (err) {
      if (err instanceof ApiError) throw new FlowError(err.code, err.message);
      throw err;
    }
    try {
      const config = await client(r);
      const tokenSet = await exchange(r, config, params, state, flow);
      const profile = await r.provider.profile(config, tokenSet, params, context(id));
      return { profile, tokenSet };
    } catch (err) {
      log.warn({ provider: id, err: reason(err), code: (err as { code?: string }).code }, 'oauth: code exchange failed');
      throw new FlowError('oauth_failed', `${id} sign-in could not be completed; try again.`);
    }
  }

  return {
    /** The name of the browser-binding cookie (`__Host-plinth_oauth` over https). */
    cookieName,
    /** GET /v1/auth/oauth/{provider}?redirect_url=: 302 to the provider's consent screen. */
    async start(name: string, redirectUrl: unknown, cookie: string | null): Promise<Redirect> {
      const r = resolve(name, true);
      if (typeof redirectUrl !== 'string' || redirectUrl === '') {
        throw new ApiError('invalid_request', 'redirect_url is required: the app page that receives the session.');
      }
      allowedRedirect(settings, redirectUrl, 'redirect_url');
      const config = await clientOrFail(r);
      // Adopting a cookie the browser already has lets two sign-ins run in one browser; only a
      // `__Host-` cookie can be trusted not to have been planted (login CSRF).
      const binding = secureCookie && cookie && BINDING.test(cookie) ? cookie : randomToken(32);
      const location = await begin(r, config, redirectUrl, binding, null);
      return { location, setCookie: binding === cookie ? undefined : bindingCookie(binding) };
    },

    /**
     * GET or POST /v1/auth/oauth/{provider}/callback. A bad, expired, reused or foreign state
     * is 400 invalid_state (nothing trustworthy to redirect to); every later failure goes back
     * to the app as `#error=<code>&error_description=…`.
     */
    async callback(name: string, params: Record<string, string>, cookie: string | null, who: ClientInfo): Promise<Redirect> {
      const id = resolve(name, false).provider.id;
      const { flow, state, test } = await trustedFlow(id, params, cookie);
      if (test) return finishTest(test, id, params, state, flow);
      try {
        const { profile } = await providerProfile(id, params, state, flow);
        const session = await sessions.signInWith(who, (tx, now) => userFor(accounts, tx, id, profile, now), 'oauth');
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

    /**
     * GET /auth/v1/authorize?provider= (and, with `link`, the URL GET
     * /auth/v1/user/identities/authorize answers): the provider's authorization URL for a flow
     * that comes back to /auth/v1/callback. `redirectTo` was checked by the caller against the
     * project's allowed redirect URLs. A sign-in is bound to the browser (the cookie of `start`,
     * on /auth/v1's path); a link cannot be (auth-js starts it with a fetch that carries no
     * cookie), so it must carry a PKCE challenge, and only its code's exchange, with the verifier,
     * while the starting session is open, attaches anything (docs/supabase.md, "Linking").
     */
    async startFace(name: string, face: FaceStart, cookie: string | null): Promise<Redirect> {
      const r = resolve(name, true);
      if (face.link && !face.pkce) {
        throw new ApiError(
          'pkce_required',
          'Linking an identity needs the PKCE flow (createClient(…, {auth: {flowType: "pkce"}})): its result is a code only the app that started it can exchange.',
        );
      }
      const config = await clientOrFail(r);
      if (face.link) return { location: await begin(r, config, face.redirectTo, randomToken(32), null, face) };
      const binding = secureCookie && cookie && BINDING.test(cookie) ? cookie : randomToken(32);
      const location = await begin(r, config, face.redirectTo, binding, null, face);
      return { location, setCookie: binding === cookie ? undefined : bindingCookie(binding, faceCookiePath) };
    },

    /**
     * GET or POST /auth/v1/callback: GoTrue's one callback, the provider named by the state. The
     * state is checked as on /v1/auth (signed, single use, this browser's); every later failure
     * goes back to `redirect_to` with GoTrue's `error`, `error_code` and `error_description` (in
     * the query for a PKCE flow, else in the fragment). Success: the session in the fragment
     * (with `provider_token`), or for a PKCE flow `?code=`, which decides nothing until it is
     * exchanged.
     */
    async faceCallback(params: Record<string, string>, cookie: string | null, who: ClientInfo): Promise<Redirect> {
      const { flow, state, id } = await trustedFlow(null, params, cookie);
      const pkce = flow.code_challenge !== null;
      const fail = (code: string, description: string) =>
        goTrueBack(flow.redirect_url, pkce, {
          error: code === 'user_banned' ? 'access_denied' : 'server_error',
          error_code: code === 'oauth_failed' ? 'bad_oauth_callback' : code,
          error_description: description,
        });
      if (params.error) {
        // The provider's own refusal (the user said no): GoTrue passes it on as it came.
        return goTrueBack(flow.redirect_url, pkce, {
          error: params.error.slice(0, 100),
          error_code: params.error.slice(0, 100),
          error_description: (params.error_description || params.error).slice(0, 300),
        });
      }
      try {
        const { profile, tokenSet } = await providerProfile(id, params, state, flow);
        if (pkce) {
          const raw = randomToken(32);
          await db.query(
            `with gone as (delete from auth.oauth_codes where expires_at < $11::timestamptz)
             insert into auth.oauth_codes (hash, provider, profile, provider_token, provider_refresh_token, code_challenge,
               code_challenge_method, link_user_id, link_session_id, expires_at)
             values ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10::timestamptz)`,
            [
              sha256(raw),
              id,
              JSON.stringify(profile),
              tokenSet.access_token ?? null,
              tokenSet.refresh_token ?? null,
              flow.code_challenge,
              flow.code_challenge_method ?? 's256',
              flow.link_user_id,
              flow.link_session_id,
              iso(clock.now() + CODE_TTL_SECONDS * 1000),
              iso(clock.now()),
            ],
          );
          const url = new URL(flow.redirect_url);
          url.searchParams.set('code', raw);
          return { location: url.href };
        }
        const session = await sessions.signInWith(who, (tx, now) => userFor(accounts, tx, id, profile, now), 'oauth');
        return goTrueBack(flow.redirect_url, false, {
          access_token: session.access_token,
          expires_at: String(session.expires_at),
          expires_in: String(session.expires_in),
          ...(tokenSet.access_token ? { provider_token: tokenSet.access_token } : {}),
          ...(tokenSet.refresh_token ? { provider_refresh_token: tokenSet.refresh_token } : {}),
          refresh_token: session.refresh_token,
          token_type: 'bearer',
        });
      } catch (err) {
        if (err instanceof ApiError && err.code === 'user_banned') return fail(err.code, err.message);
        if (!(err instanceof FlowError)) throw err;
        return fail(err.code, err.message);
      }
    },

    /**
     * POST /auth/v1/token?grant_type=pkce with a social sign-in's or link's code: null when
     * `raw` is no such code (the caller tries the mailed links). The code is deleted whatever
     * happens next (a wrong verifier voids it); then the verifier must match the challenge the
     * app sent to /authorize. A sign-in's user is found, linked or made here (userFor); a
     * link's identity is attached here, to the user whose session started it, if that session
     * is still open; a provider account another user has is refused (409 identity_exists).
     */
    async redeem(raw: string, verifier: string, who: ClientInfo): Promise<Redeemed | null> {
      const hash = sha256(raw);
      const known = await db.query('select 1 from auth.oauth_codes where hash = $1', [hash]);
      if (!known.rows.length) return null;
      let providerToken: string | null = null;
      let providerRefreshToken: string | null = null;
      const session = await sessions.signInWith(
        who,
        async (tx, now) => {
          const { rows } = await tx.query<CodeRow>(
            `delete from auth.oauth_codes where hash = $1 returning provider, profile, provider_token, provider_refresh_token,
               code_challenge, code_challenge_method, link_user_id, link_session_id, expires_at > $2::timestamptz as live`,
            [hash, iso(now)],
          );
          const c = rows[0];
          if (!c) return new ApiError('invalid_code', 'This code was already used.', { reason: 'used' });
          if (!c.live) return new ApiError('code_expired', 'This code has expired: sign in again.', { reason: 'expired' });
          if (pkceRefused({ code_challenge: c.code_challenge, code_challenge_method: c.code_challenge_method }, verifier)) {
            return new ApiError('invalid_code', 'The code verifier does not match the code challenge.', { reason: 'verifier' });
          }
          providerToken = c.provider_token;
          providerRefreshToken = c.provider_refresh_token;
          const profile = c.profile;
          if (!c.link_user_id) {
            try {
              return await userFor(accounts, tx, c.provider, profile, now);
            } catch (err) {
              if (err instanceof FlowError) return new ApiError('oauth_failed', err.message);
              throw err;
            }
          }
          return attachIdentity(accounts, tx, { userId: c.link_user_id, sessionId: c.link_session_id }, c.provider, profile, now);
        },
        'oauth',
      );
      return { session, providerToken, providerRefreshToken };
    },

    /**
     * POST /auth/v1/token?grant_type=id_token (auth-js's signInWithIdToken, and linkIdentity
     * with a token): an ID token the app got from the provider itself, verified against the
     * provider Plinth knows by that id (a built-in one that issues ID tokens, or one of
     * `oidc_providers`: its discovery document and JWKS, its client id as the audience, the
     * nonce; id-token-grant.ts). Then the same rules as the redirect flows: a sign-in finds,
     * links or makes the account (userFor), a link attaches the identity to the signed-in user
     * whose session is open (attachIdentity). A disabled or unknown provider: provider_disabled,
     * provider_not_found; a refused token: 400 oauth_failed with `details.reason`.
     */
    async signInWithIdToken(input: IdTokenGrant, who: ClientInfo): Promise<Session> {
      const r = resolve(input.provider, true);
      const toProfile = r.provider.idTokenProfile;
      if (!r.provider.oidc || !toProfile) {
        throw new ApiError('provider_not_found', `${r.provider.id} issues no ID tokens: sign in with it through its sign-in page.`);
      }
      const config = await clientOrFail(r);
      const id = r.provider.id;
      let profile: Profile;
      try {
        profile = await verifyGrantToken(input, {
          config,
          issuers: (claims) => {
            const discovered = config.serverMetadata().issuer;
            return r.oidc ? [r.oidc.issuer] : (r.provider.idTokenIssuers?.(discovered, claims) ?? [discovered]);
          },
          keys: (uri, refresh) => {
            const now = clock.now();
            const again = refresh && now - (grantRefreshes.get(uri) ?? Number.NEGATIVE_INFINITY) >= GRANT_REFRESH_MS;
            if (again) {
              grantRefreshes.set(uri, now);
              if (grantRefreshes.size > 1000) grantRefreshes.delete(grantRefreshes.keys().next().value as string);
            }
            return discovery.keys(uri, { ...(again ? { refresh: true } : { allowStale: true }), builtIn: !r.oidc });
          },
          toProfile,
          log: (problem) => log.info({ provider: id, problem }, 'oauth: an ID token was refused'),
        });
      } catch (err) {
        if (err instanceof OidcProblem)
          throw new ApiError(err.code, `${id} cannot be used now: ${err.message}.`, undefined, { status: 502 });
        throw err;
      }
      return sessions.signInWith(
        who,
        async (tx, now) => {
          if (input.link) return attachIdentity(accounts, tx, input.link, id, profile, now);
          try {
            return await userFor(accounts, tx, id, profile, now);
          } catch (err) {
            if (err instanceof FlowError) return new ApiError('oauth_failed', err.message);
            throw err;
          }
        },
        'oauth',
      );
    },

    /**
     * POST /api/v1/settings/auth/oidc/{id}/test (management): a test sign-in of an
     * `oidc_providers` entry, enabled or not. Answers the URL to open in a browser (the
     * provider's sign-in page) and the test's id; the callback stores what the provider sent and
     * sends the browser to the console's result page.
     */
    async startTest(name: string): Promise<{ url: string; test_id: string; result_url: string; expires_in: number }> {
      if (isOAuthProvider(name)) {
        throw new ApiError('provider_not_found', `${name} is a built-in provider; test sign-ins are for oidc_providers.`);
      }
      const r = resolve(name, false);
      const config = await clientOrFail(r);
      const testId = await tests.create(r.provider.id, (r.oidc as OidcProviderSettings).issuer, clock.now());
      const resultUrl = `${publicUrl}${TEST_RESULT_PAGE}?provider=${encodeURIComponent(r.provider.id)}&test=${testId}`;
      const url = await begin(r, config, resultUrl, randomToken(32), testId);
      return { url, test_id: testId, result_url: resultUrl, expires_in: STATE_TTL_SECONDS };
    },

    /** GET /api/v1/settings/auth/oidc/{id}/tests/{test_id} (management): the stored result, or 404 not_found. */
    async testResult(name: string, testId: string): Promise<OidcTestResult> {
      const result = await tests.read(name, testId, clock.now());
      if (!result) throw new ApiError('not_found', 'No test sign-in with this id for this provider (results are kept one hour).');
      return result;
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
