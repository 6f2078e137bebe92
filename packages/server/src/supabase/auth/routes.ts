import type { Session } from '@plinth/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type Auth,
  clientOf,
  type FaceStart,
  findUserClaims,
  formFields as fields,
  type IdTokenRefusal,
  pkceChallenge,
  type Redeemed,
  tokenOrCode,
} from '../../auth/index.js';
import type { Db } from '../../db/index.js';
import { type App, ApiError, type CallerGuards, readCookie } from '../../http/index.js';
import type { Clock } from '../../lib/index.js';
import type { SettingsStore } from '../../settings/index.js';
import type { AdminHandlers } from './admin.js';
import { GoTrueError, goTrueErrorOf } from './errors.js';
import { createPasskeyFace } from './passkeys.js';
import { toGoTrueSession, toGoTrueUser } from './shapes.js';

export interface FaceDeps {
  auth: Auth;
  db: Db;
  clock: Clock;
  /** Who is calling (http/guards.ts): the admin API takes the secret key. */
  callers: CallerGuards;
  /** PUBLIC_URL: generate_link's action_link points at this face's GET /verify there. */
  publicUrl: string;
  settings: Pick<SettingsStore, 'auth' | 'isRedirectAllowed'>;
  /**
   * Whether a user may link and unlink identities here: a Supabase folder's `[auth]
   * enable_manual_linking` (false by default, as GoTrue's, which then answers linkIdentity and
   * unlinkIdentity "Manual linking is disabled"); on for other projects.
   */
  manualLinking?: boolean;
}

type Body = Record<string, unknown>;
/** The query string's values (a repeated parameter: its first). */
function q(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[name];
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' ? one : undefined;
}

/** The JSON object body, or {} (GoTrue reads absent fields as empty). */
function bodyOf(req: FastifyRequest): Body {
  const b = req.body;
  if (b === undefined || b === null || b === '') return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new GoTrueError(400, 'bad_json', 'Could not parse request body as JSON');
  return b as Body;
}

/** The body's PKCE challenge (`code_challenge`, `code_challenge_method`), checked. */
const pkceOf = (b: Body) => pkceChallenge(b.code_challenge, b.code_challenge_method);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** /authorize's own parameters; the others go on to the provider. */
const FACE_PARAMS = new Set([
  'provider',
  'redirect_to',
  'scopes',
  'code_challenge',
  'code_challenge_method',
  'skip_http_redirect',
  'apikey',
]);

function signedIn(req: FastifyRequest) {
  if (!req.signedIn) throw new ApiError('unauthorized', 'Send the user access token.');
  return req.signedIn;
}

/** The verify types of GoTrue's email links, and which Plinth link each one is. */
const EMAIL_TYPES = new Set(['signup', 'invite', 'magiclink', 'recovery', 'email_change', 'email']);
const PHONE_TYPES = new Set(['sms', 'phone_change']);

/**
 * The handlers of /auth/v1: each parses GoTrue's request, calls the service Plinth's own route
 * calls (auth/), and answers in GoTrue's shapes. No rule lives here.
 */
export function createFaceHandlers(deps: FaceDeps) {
  const { auth, db, settings } = deps;
  const s = auth.services;

  async function extras(userId: string) {
    const [claims, { factors }] = await Promise.all([findUserClaims(db, userId), s.mfa.list(userId)]);
    return { claims, factors };
  }
  const session = async (set: Session) => toGoTrueSession(set, await extras(set.user.id));
  const userOf = async (userId: string) => toGoTrueUser(await s.users.get(userId), await extras(userId));

  /** A link's or code's use: a session, whichever Plinth method the GoTrue type names. */
  async function verify(b: Body, req: FastifyRequest): Promise<Session> {
    const type = str(b.type) ?? '';
    const client = clientOf(req);
    if (PHONE_TYPES.has(type)) {
      // GoTrue's number: E.164 digits, the `+` optional.
      const phone = typeof b.phone === 'string' ? b.phone.trim() : '';
      if (!/^\+?[1-9]\d{1,14}$/.test(phone))
        throw new GoTrueError(400, 'validation_failed', 'Invalid phone number format (E.164 required)');
      try {
        return await s.phone.verify({ phone: phone.startsWith('+') ? phone : `+${phone}`, code: b.token }, client);
      } catch (err) {
        // No code was sent to a number Plinth does not take, nor while phone sign-in is off:
        // GoTrue's answer for a code that matches nothing.
        if (err instanceof ApiError && ['invalid_phone', 'paid_plan_required', 'provider_disabled'].includes(err.code))
          throw new GoTrueError(403, 'otp_expired', 'Token has expired or is invalid');
        throw err;
      }
    }
    if (!EMAIL_TYPES.has(type)) throw new GoTrueError(400, 'validation_failed', `Verify requires a verification type (got "${type}")`);
    // The link's token: `token_hash` (the `?token=` of the mailed link), or `token` with
    // `email`: the 6-digit code mailed beside the link (auth-js's verifyOtp({email, token})).
    const raw = str(b.token_hash) ?? str(b.token);
    if (!raw) throw new GoTrueError(400, 'validation_failed', 'Verify requires either a token or a token hash');
    const token: unknown = !str(b.token_hash) && str(b.email) && /^\d{6}$/.test(raw) ? tokenOrCode({ email: b.email, code: raw }) : raw;
    switch (type) {
      case 'magiclink':
        return s.magicLink.signIn({ token }, client);
      case 'recovery':
        return s.password.signInWithResetLink({ token }, client);
      case 'email':
        // GoTrue's `email` covers a sign-up's link and a magic link: whichever this token is.
        try {
          return await s.magicLink.signIn({ token }, client);
        } catch (err) {
          if (!(err instanceof ApiError) || (err.code !== 'magic_link_invalid' && err.code !== 'provider_disabled')) throw err;
          return s.verification.verifyAndSignIn({ token }, client);
        }
      default:
        return s.verification.verifyAndSignIn({ token }, client);
    }
  }

  /**
   * POST /token?grant_type=pkce: the `?code=` of a link bound to a PKCE challenge, with the
   * verifier. The code is the link's token; whichever link it is (magic link, sign-up, reset)
   * takes it only with the matching verifier (pkceRefused, in the same conditional consume).
   */
  async function exchange(code: unknown, verifier: unknown, client: ReturnType<typeof clientOf>): Promise<Session | Redeemed> {
    if (typeof code !== 'string' || typeof verifier !== 'string' || !code || !verifier) {
      throw new GoTrueError(400, 'validation_failed', 'invalid request: both auth code and code verifier should be non-empty');
    }
    // A social sign-in's or link's code (auth/oauth: single use, the verifier checked there).
    try {
      const social = await s.oauth.redeem(code, verifier, client);
      if (social) return social;
    } catch (err) {
      if (err instanceof ApiError) {
        const reason = (err.details as { reason?: string } | undefined)?.reason;
        if (reason === 'verifier')
          throw new GoTrueError(400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier');
        if (reason === 'used') throw new GoTrueError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
        if (err.code === 'code_expired') throw new GoTrueError(400, 'flow_state_expired', 'Flow state has expired');
        if (err.code === 'identity_exists')
          throw new GoTrueError(422, 'identity_already_exists', 'Identity is already linked to another user');
      }
      throw err;
    }
    const input = { token: code, codeVerifier: verifier };
    const attempts = [
      () => s.magicLink.signIn(input, client),
      () => s.verification.verifyAndSignIn(input, client),
      () => s.password.signInWithResetLink(input, client),
    ];
    for (const attempt of attempts) {
      try {
        return await attempt();
      } catch (err) {
        // Not this kind of link (or that method is off): the next one.
        if (!(err instanceof ApiError) || !['magic_link_invalid', 'token_invalid', 'provider_disabled'].includes(err.code)) throw err;
      }
    }
    throw new GoTrueError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
  }

  /**
   * POST /token?grant_type=id_token: `{provider, id_token, nonce?, access_token?}` (auth-js's
   * signInWithIdToken), or with `link_identity: true` and the user's access token as the Bearer
   * (linkIdentity({provider, token})): the identity attached to that user, under the PKCE
   * link's rules (a Supabase folder needs `enable_manual_linking`; the session must be open;
   * another user's provider account is refused). GoTrue's provider names: `azure` is Microsoft,
   * `custom:<id>` an `oidc_providers` entry.
   */
  async function idTokenGrant(req: FastifyRequest, b: Body): Promise<Session> {
    const oauthError = (message: string) =>
      new GoTrueError(400, 'validation_failed', message, { error: 'invalid_request', error_description: message });
    const idToken = str(b.id_token);
    if (!idToken) throw oauthError('id_token required');
    const named = str(b.provider);
    if (!named) throw oauthError('provider or client_id and issuer required');
    const provider = named === 'azure' ? 'microsoft' : named.startsWith('custom:') ? named.slice('custom:'.length) : named;
    let link: { userId: string; sessionId: string } | undefined;
    if (b.link_identity === true) {
      if (deps.manualLinking === false) throw new GoTrueError(404, 'manual_linking_disabled', 'Manual linking is disabled');
      // The route's guard read the key alone; the link is the Bearer's user's (the user guard,
      // as on GET /user/identities/authorize: an open session, aal2 where the user has a factor).
      req.principal = null;
      await auth.guards.user(req);
      const who = signedIn(req);
      if (!who.sessionId) throw new ApiError('unauthorized', 'Send the user access token.');
      link = { userId: who.userId, sessionId: who.sessionId };
    }
    const input = { provider, idToken, nonce: str(b.nonce) ?? null, accessToken: str(b.access_token) ?? null, ...(link ? { link } : {}) };
    try {
      return await s.oauth.signInWithIdToken(input, clientOf(req));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'provider_not_found') throw oauthError(`Custom OIDC provider "${named.slice(0, 60)}" not allowed`);
      if (err.code === 'provider_disabled')
        throw new GoTrueError(400, 'provider_disabled', `Provider (issuer "${named.slice(0, 60)}") is not enabled`);
      const reason = (err.details as { reason?: IdTokenRefusal } | undefined)?.reason;
      if (err.code === 'oauth_failed' && reason) throw oauthError(err.message);
      throw err;
    }
  }

  /** GoTrue's parameters of /authorize and /user/identities/authorize: the redirect (the site URL when refused), scopes, PKCE, the rest for the provider. */
  function faceStart(req: FastifyRequest): FaceStart {
    const redirect = redirectTo(req) ?? settings.auth().allowed_redirect_urls[0];
    if (!redirect) throw new GoTrueError(400, 'validation_failed', 'redirect_to is required and must be an allowed redirect URL');
    const query = fields(req.query);
    const queryParams: Record<string, string> = {};
    for (const [k, v] of Object.entries(query)) if (!FACE_PARAMS.has(k)) queryParams[k] = v;
    const pkce = pkceChallenge(query.code_challenge, query.code_challenge_method);
    return { redirectTo: redirect, scopes: str(query.scopes), queryParams, ...(pkce ? { pkce } : {}) };
  }

  /** A provider this face cannot start with, in GoTrue's words. */
  async function startOrRefuse<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'provider_not_found')
        throw new GoTrueError(400, 'validation_failed', 'Unsupported provider: Provider could not be found');
      if (err instanceof ApiError && err.code === 'provider_disabled')
        throw new GoTrueError(400, 'validation_failed', 'Unsupported provider: provider is not enabled');
      if (err instanceof ApiError && err.code === 'pkce_required') throw new GoTrueError(400, 'validation_failed', err.message);
      throw err;
    }
  }

  /**
   * `redirect_to` when the project allows it (GoTrue's `?redirect_to=`); one it does not allow
   * is dropped, as GoTrue falls back to its site URL: the mail then lands on the project's own
   * page for it, never on the URL asked for (Plinth's /v1/auth refuses it with 400 instead).
   */
  function redirectTo(req: FastifyRequest): string | undefined {
    const to = str(q(req, 'redirect_to'));
    return to !== undefined && settings.isRedirectAllowed(to) ? to : undefined;
  }

  return {
    /** GoTrue's /passkeys… and /admin/users/{id}/passkeys… (passkeys.ts). */
    passkeys: createPasskeyFace(deps, session),

    /** The keys that verify this project's access tokens (auth-js's getClaims reads them here). */
    jwks: async () => s.public.jwks(),

    health: async () => ({ version: 'plinth', name: 'GoTrue', description: 'Plinth auth, in GoTrue’s wire format' }),

    settings: async () => {
      const a = settings.auth();
      const external: Record<string, boolean> = {
        email: a.email_password_enabled || a.magic_link_enabled,
        phone: a.phone_enabled,
        anonymous_users: a.anonymous_sign_in_enabled,
      };
      for (const [id, p] of Object.entries(a.providers)) external[id] = (p as { enabled?: boolean }).enabled === true;
      for (const p of a.oidc_providers) external[p.id] = p.enabled !== false;
      return {
        external,
        disable_signup: false,
        mailer_autoconfirm: !a.require_email_confirmation,
        phone_autoconfirm: false,
        sms_provider: '',
        saml_enabled: false,
      };
    },

    /** POST /signup: email and password (a session when no confirmation is due, else the user). */
    signUp: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      if (b.email === undefined && b.phone === undefined) {
        try {
          return await session(await s.anonymous.signIn({ data: b.data }, clientOf(req)));
        } catch (err) {
          if (err instanceof ApiError && err.code === 'provider_disabled') {
            throw new GoTrueError(422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled');
          }
          throw goTrueErrorOf(err); // no email is sent: a limit here is the request limit's code
        }
      }
      if (b.email === undefined) {
        throw new GoTrueError(
          422,
          'phone_provider_disabled',
          'Phone sign-up with a password is not offered: send a code (POST /otp) instead',
        );
      }
      const data = b.data === undefined || b.data === null ? undefined : (b.data as Record<string, unknown>);
      const out = await s.password.signUp(
        { email: b.email, password: b.password, emailRedirectTo: redirectTo(req), data, pkce: pkceOf(b) },
        clientOf(req),
      );
      if (out.session) return session(out.session);
      // A decoy (the address is taken) reads no claims: it must look like a new user.
      const real = await findUserClaims(db, out.user.id);
      return toGoTrueUser(out.user, { claims: real, factors: [] });
    },

    /** POST /token?grant_type=password|refresh_token. */
    token: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      const grant = q(req, 'grant_type');
      if (grant === 'password') {
        if (b.email === undefined)
          throw new GoTrueError(400, 'validation_failed', 'Only an email address is supported for sign in with a password');
        return session(await s.password.signIn({ email: b.email, password: b.password }, clientOf(req)));
      }
      if (grant === 'refresh_token') return session(await s.sessions.refresh(b.refresh_token));
      if (grant === 'pkce') {
        const out = await exchange(b.auth_code, b.code_verifier, clientOf(req));
        if (!('providerToken' in out)) return session(out);
        return {
          ...(await session(out.session)),
          ...(out.providerToken ? { provider_token: out.providerToken } : {}),
          ...(out.providerRefreshToken ? { provider_refresh_token: out.providerRefreshToken } : {}),
        };
      }
      if (grant === 'id_token') return session(await idTokenGrant(req, b));
      // Sign-in methods this face does not offer, refused in GoTrue's words for a method that is off.
      if (grant === 'web3') throw new GoTrueError(400, 'web3_provider_disabled', 'Web3 provider is disabled');
      throw new GoTrueError(400, 'validation_failed', 'unsupported_grant_type');
    },

    getUser: async (req: FastifyRequest) => userOf(signedIn(req).userId),

    /**
     * DELETE /user/identities/{identity_id} (auth-js's unlinkIdentity): the id this face gives an
     * identity (shapes.ts: the user's id for email and phone, `<provider>:<user id>` else).
     */
    unlinkIdentity: async (req: FastifyRequest) => {
      const who = signedIn(req);
      if (deps.manualLinking === false) throw new GoTrueError(404, 'manual_linking_disabled', 'Manual linking is disabled');
      const { id } = req.params as { id: string };
      const user = await s.users.get(who.userId);
      const provider =
        id === who.userId
          ? user.identities.some((i) => i.provider === 'email')
            ? 'email'
            : 'phone'
          : id.endsWith(`:${who.userId}`)
            ? id.slice(0, -(who.userId.length + 1))
            : null;
      if (!provider || !user.identities.some((i) => i.provider === provider))
        throw new GoTrueError(422, 'identity_not_found', "Identity doesn't exist");
      await s.users.unlinkIdentity(who.userId, who.sessionId, provider, bodyOf(req), clientOf(req));
      return {};
    },

    /** PUT /user: `data` merged into user_metadata; email and password changes under Plinth's reauthentication rule. */
    putUser: async (req: FastifyRequest) => {
      const who = signedIn(req);
      const b = bodyOf(req);
      if (b.phone !== undefined)
        throw new GoTrueError(422, 'phone_provider_disabled', 'A phone number is changed through POST /otp and /verify');
      await s.users.update(
        who.userId,
        who.sessionId,
        {
          email: b.email,
          password: b.password,
          data: b.data,
          nonce: b.nonce,
          current_password: b.current_password,
          emailRedirectTo: redirectTo(req),
        },
        clientOf(req),
      );
      return userOf(who.userId);
    },

    logout: async (req: FastifyRequest, reply: FastifyReply) => {
      const scope = q(req, 'scope') ?? 'global';
      if (scope !== 'global' && scope !== 'local' && scope !== 'others') {
        throw new GoTrueError(400, 'validation_failed', 'Unsupported logout scope');
      }
      const who = signedIn(req);
      await s.sessions.signOut(who.userId, who.sessionId, scope);
      return reply.code(204).send();
    },

    /** POST /recover: a reset link to `password_reset_url` (known and unknown addresses alike). */
    recover: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      await s.password.forgotPassword({ email: b.email, pkce: pkceOf(b) });
      return {};
    },

    /** POST /otp: a magic link by email, or a code by SMS. */
    otp: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      if (b.phone !== undefined && b.email === undefined) {
        await s.phone.sendCode({ phone: b.phone }, clientOf(req));
        return { message_id: null };
      }
      await s.magicLink.request({ email: b.email, emailRedirectTo: redirectTo(req), pkce: pkceOf(b) }, clientOf(req));
      return {};
    },

    /** POST /verify: the link's token (`token_hash`) or a phone code, for a session. */
    verifyPost: async (req: FastifyRequest) => session(await verify(bodyOf(req), req)),

    /**
     * GET /verify?token=&type=&redirect_to=: the mailed link itself (when a project points its
     * link settings here); a 303 to `redirect_to` with the session in the fragment, or the error.
     */
    verifyGet: async (req: FastifyRequest, reply: FastifyReply) => {
      const to = redirectTo(req) ?? settings.auth().allowed_redirect_urls[0];
      if (!to) throw new GoTrueError(400, 'validation_failed', 'redirect_to is required and must be an allowed redirect URL');
      const url = new URL(to);
      try {
        const set = await verify({ type: q(req, 'type'), token_hash: q(req, 'token') }, req);
        url.hash = new URLSearchParams({
          access_token: set.access_token,
          expires_at: String(set.expires_at),
          expires_in: String(set.expires_in),
          refresh_token: set.refresh_token,
          token_type: 'bearer',
          type: q(req, 'type') ?? '',
        }).toString();
      } catch (err) {
        const e = goTrueErrorOf(err);
        if (e.status >= 500) throw err;
        url.hash = new URLSearchParams({ error: 'access_denied', error_code: e.errorCode, error_description: e.message }).toString();
      }
      return reply.code(303).header('location', url.toString()).header('cache-control', 'no-store').send();
    },

    /**
     * POST /factors: a TOTP factor (GoTrue's `type` and raw SVG `qr_code`, which auth-js wraps
     * as a data URL), or a WebAuthn one (`factor_type: 'webauthn'`: `{id, type, friendly_name}`).
     */
    enroll: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      if (b.factor_type === 'webauthn') {
        const w = await s.mfa.enrollWebAuthn(signedIn(req), { friendly_name: b.friendly_name }).catch((err) => {
          if (err instanceof ApiError && err.code === 'provider_disabled')
            throw new GoTrueError(422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn');
          throw err;
        });
        return { id: w.id, type: 'webauthn', friendly_name: w.friendly_name ?? '' };
      }
      const f = await s.mfa.enroll(signedIn(req), { factor_type: b.factor_type, friendly_name: b.friendly_name });
      const svg = f.totp.qr_code.startsWith('data:image/svg+xml;base64,')
        ? Buffer.from(f.totp.qr_code.slice('data:image/svg+xml;base64,'.length), 'base64').toString()
        : f.totp.qr_code;
      return {
        id: f.id,
        type: 'totp',
        friendly_name: f.friendly_name ?? '',
        totp: { qr_code: svg, secret: f.totp.secret, uri: f.totp.uri },
      };
    },

    /**
     * POST /factors/{id}/challenge: a WebAuthn factor's carries GoTrue's `webauthn: {type,
     * credential_options: {publicKey}}`; the relying party is the project's, not the
     * `webauthn.rp_id`/`rp_origins` a client sends (GoTrue too reads its own configuration).
     */
    challenge: async (req: FastifyRequest) => {
      const c = await s.mfa.challenge(signedIn(req), (req.params as { id: string }).id);
      if (!c.webauthn) return { id: c.id, type: 'totp', expires_at: c.expires_at };
      return {
        id: c.id,
        type: 'webauthn',
        expires_at: c.expires_at,
        webauthn: { type: c.webauthn.type, credential_options: { publicKey: c.webauthn.options } },
      };
    },

    /**
     * POST /factors/{id}/verify: an aal2 session through mfa's verify (its attempt limit and
     * signInWith); a WebAuthn factor's answer is `webauthn: {type, credential_response}`.
     */
    verifyFactor: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      const w = b.webauthn as { type?: unknown; credential_response?: unknown } | undefined | null;
      if (w !== undefined && w !== null) {
        if (w.type !== 'create' && w.type !== 'request')
          throw new GoTrueError(400, 'validation_failed', 'WebAuthn type must be create or request');
        if (w.credential_response === undefined || w.credential_response === null)
          throw new GoTrueError(400, 'validation_failed', 'credential_response required');
      }
      const set = await s.mfa.verify(
        signedIn(req),
        (req.params as { id: string }).id,
        { challenge_id: b.challenge_id, code: b.code, credential: w?.credential_response },
        clientOf(req),
      );
      return session(set);
    },

    unenroll: async (req: FastifyRequest) => s.mfa.unenroll(signedIn(req), (req.params as { id: string }).id),

    /** GET /reauthenticate: a code (the `nonce` of PUT /user) to the confirmed email or phone. */
    reauthenticate: async (req: FastifyRequest) => {
      await s.users.reauthenticate(signedIn(req).userId, clientOf(req)).catch((err) => {
        if (err instanceof ApiError && err.code === 'invalid_request')
          throw new GoTrueError(
            400,
            'validation_failed',
            'Reauthentication requires the user to have an email or a phone number, confirmed (else send current_password)',
          );
        throw err;
      });
      return {};
    },

    /** What this face does not offer, in GoTrue's words for a feature that is off. */
    sso: async () => {
      throw new GoTrueError(404, 'saml_provider_disabled', 'SAML 2.0 is disabled');
    },

    /**
     * GET /authorize?provider=&redirect_to=&scopes=&code_challenge=&code_challenge_method= (a
     * browser navigates here: auth-js's signInWithOAuth): 302 to the provider, with the browser's
     * binding cookie. Other query parameters go on to the provider (auth-js's `queryParams`).
     */
    authorize: async (req: FastifyRequest, reply: FastifyReply) => {
      const face = faceStart(req);
      const r = await startOrRefuse(() =>
        s.oauth.startFace(str(q(req, 'provider')) ?? '', face, readCookie(req.headers.cookie, s.oauth.cookieName)),
      );
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if (r.setCookie) reply.header('set-cookie', r.setCookie);
      return reply.redirect(r.location, 302);
    },

    /** GET and POST (Apple's form_post) /callback: the provider's answer; 302 to `redirect_to` (auth/oauth's faceCallback). */
    callback: async (req: FastifyRequest, reply: FastifyReply) => {
      const params = fields(req.method === 'POST' ? req.body : req.query);
      const r = await s.oauth.faceCallback(params, readCookie(req.headers.cookie, s.oauth.cookieName), clientOf(req));
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(r.location, 302);
    },

    /**
     * GET /user/identities/authorize (auth-js's linkIdentity, with the user's token and
     * `skip_http_redirect=true`): `{url}`, the provider's page. Only with a PKCE challenge: the
     * flow's result is a code, and only its exchange with the verifier, while this session is
     * open, attaches the identity to this user (docs/supabase.md, "Linking an identity").
     */
    linkIdentity: async (req: FastifyRequest, reply: FastifyReply) => {
      const who = signedIn(req);
      if (deps.manualLinking === false) throw new GoTrueError(404, 'manual_linking_disabled', 'Manual linking is disabled');
      if (!who.sessionId) throw new ApiError('unauthorized', 'Send the user access token.');
      const face = { ...faceStart(req), link: { userId: who.userId, sessionId: who.sessionId } };
      const r = await startOrRefuse(() => s.oauth.startFace(str(q(req, 'provider')) ?? '', face, null));
      if (q(req, 'skip_http_redirect') === 'true') return { url: r.location };
      return reply.header('cache-control', 'no-store').redirect(r.location, 302);
    },

    /** POST /resend: a sign-up's verification link again. */
    resend: async (req: FastifyRequest) => {
      const b = bodyOf(req);
      if (b.type !== 'signup') {
        throw new GoTrueError(400, 'validation_failed', 'Only a sign-up link is resent here; ask again for an email change or a code');
      }
      await s.verification.resend({ email: b.email });
      return {};
    },
  };
}

export type FaceHandlers = ReturnType<typeof createFaceHandlers>;

/**
 * POST /logout's guard: the user's token (`stepUp`), or GoTrue's admin `signOut(jwt)`, which
 * sends the secret key as `apikey` and the user's access token as the Bearer: that token's
 * session is the one signed out (a Bearer that is no valid token: 403 bad_jwt).
 */
function logoutGuard(stepUp: Auth['guards']['stepUp'], service: CallerGuards['service']) {
  return async (req: FastifyRequest) => {
    const apikey = typeof req.headers.apikey === 'string' ? req.headers.apikey.trim() : '';
    const bearer = /^bearer\s+(.+)$/i.exec(req.headers.authorization?.trim() ?? '')?.[1]?.trim();
    const asAdmin =
      apikey !== '' &&
      bearer !== undefined &&
      bearer !== apikey &&
      (await service(req).then(
        () => true,
        () => false,
      ));
    if (!asAdmin) return stepUp(req);
    // The token alone decides whose session ends: resolved again without the key.
    delete req.headers.apikey;
    req.principal = null;
    try {
      await stepUp(req);
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'unauthorized' || err.code === 'invalid_token') && !/session/i.test(err.message))
        throw new GoTrueError(403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, token is malformed');
      throw err;
    }
  };
}

/** The route table of /auth/v1 (docs/supabase.md): one line per endpoint, guard on the line (auth's guards). */
export function registerFaceRoutes(
  app: App,
  guards: Auth['guards'],
  service: CallerGuards['service'],
  h: FaceHandlers,
  admin: AdminHandlers,
): void {
  const { apikey, user, stepUp } = guards;
  const email = { goTrue: { sendsEmail: true } };
  app.get('/auth/v1/health', { config: { rateLimit: false } }, h.health);
  app.get('/auth/v1/settings', { config: { rateLimit: false } }, h.settings);
  app.get('/auth/v1/.well-known/jwks.json', { config: { rateLimit: false } }, h.jwks);
  app.post('/auth/v1/signup', { preHandler: apikey, config: { goTrue: { signup: true, sendsEmail: true } } }, h.signUp);
  app.post('/auth/v1/token', { preHandler: apikey }, h.token);
  app.get('/auth/v1/user', { preHandler: stepUp }, h.getUser);
  app.put('/auth/v1/user', { preHandler: user, config: email }, h.putUser);
  app.delete('/auth/v1/user/identities/:id', { preHandler: user }, h.unlinkIdentity);
  app.post('/auth/v1/logout', { preHandler: logoutGuard(stepUp, service) }, h.logout);
  app.post('/auth/v1/recover', { preHandler: apikey, config: email }, h.recover);
  app.post('/auth/v1/otp', { preHandler: apikey, config: email }, h.otp);
  app.post('/auth/v1/verify', { preHandler: apikey }, h.verifyPost);
  app.get('/auth/v1/verify', {}, h.verifyGet);
  app.post('/auth/v1/resend', { preHandler: apikey, config: email }, h.resend);

  app.post('/auth/v1/sso', { preHandler: apikey }, h.sso);
  app.get('/auth/v1/user/identities/authorize', { preHandler: user }, h.linkIdentity);
  // Social sign-in: a browser navigates here (no apikey), as on /v1/auth/oauth.
  app.get('/auth/v1/authorize', {}, h.authorize);
  app.get('/auth/v1/callback', {}, h.callback);
  app.get('/auth/v1/reauthenticate', { preHandler: user, config: email }, h.reauthenticate);

  // Second factors (Plinth's mfa/: the same guards as /v1/auth/factors).
  app.post('/auth/v1/factors', { preHandler: user }, h.enroll);
  app.post('/auth/v1/factors/:id/challenge', { preHandler: stepUp }, h.challenge);
  app.post('/auth/v1/factors/:id/verify', { preHandler: stepUp, config: { goTrue: { mfa: true } } }, h.verifyFactor);
  app.delete('/auth/v1/factors/:id', { preHandler: user }, h.unenroll);

  // Passkeys (Plinth's passkeys/: the same guards as /v1/auth/passkeys).
  const pk = h.passkeys;
  const passkey = { goTrue: { passkey: true } };
  app.post('/auth/v1/passkeys/registration/options', { preHandler: user, config: passkey }, pk.registrationOptions);
  app.post('/auth/v1/passkeys/registration/verify', { preHandler: user, config: passkey }, pk.registrationVerify);
  app.post('/auth/v1/passkeys/authentication/options', { preHandler: apikey, config: passkey }, pk.authenticationOptions);
  app.post('/auth/v1/passkeys/authentication/verify', { preHandler: apikey, config: passkey }, pk.authenticationVerify);
  app.get('/auth/v1/passkeys', { preHandler: user, config: passkey }, pk.list);
  app.patch('/auth/v1/passkeys/:id', { preHandler: user, config: passkey }, pk.update);
  app.delete('/auth/v1/passkeys/:id', { preHandler: user, config: passkey }, pk.remove);

  // The admin API: the secret key only (a user's token is 403 not_admin); its writes go to the
  // audit log under the console's actions (the face is mounted after admin/, whose hook it takes).
  app.get('/auth/v1/admin/users', { preHandler: service }, admin.list);
  app.post('/auth/v1/admin/users', { preHandler: service, config: { audit: 'user.create' } }, admin.create);
  app.get('/auth/v1/admin/users/:id', { preHandler: service }, admin.get);
  app.put('/auth/v1/admin/users/:id', { preHandler: service, config: { audit: 'user.update' } }, admin.update);
  app.delete('/auth/v1/admin/users/:id', { preHandler: service, config: { audit: 'user.delete' } }, admin.remove);
  app.get('/auth/v1/admin/users/:id/factors', { preHandler: service }, admin.factors);
  app.post('/auth/v1/invite', { preHandler: service, config: { audit: 'user.create', goTrue: { sendsEmail: true } } }, admin.invite);
  app.post('/auth/v1/admin/generate_link', { preHandler: service, config: { audit: 'user.generate_link' } }, admin.generateLink);
  app.get('/auth/v1/admin/users/:id/passkeys', { preHandler: service }, pk.adminList);
  app.delete(
    '/auth/v1/admin/users/:id/passkeys/:passkeyId',
    { preHandler: service, config: { audit: 'user.passkey_remove' } },
    pk.adminRemove,
  );
  app.delete(
    '/auth/v1/admin/users/:id/factors/:factorId',
    { preHandler: service, config: { audit: 'user.factors_reset' } },
    admin.removeFactor,
  );
}
