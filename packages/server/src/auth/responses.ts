/**
 * What each `/v1/auth` route answers, as TypeBox schemas: Fastify serializes the answers with
 * them (fast-json-stringify: only the declared fields go out), and `GET /api/v1/openapi.json`
 * documents them (http/route-docs.ts), so a generated client gets the exact types. A route line
 * spreads its entry of `AUTH_DOCS` into its schema: `{ body: SignUpBody, ...AUTH_DOCS.signUp }`.
 */
import type * as Wire from '@plinth/shared';
import { OAUTH_PROVIDERS } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, wireSchema } from '../http/index.js';

export const Identity = wireSchema<Wire.Identity>()(
  Type.Object({
    provider: Type.String({ description: '`email`, `phone`, or a social provider.' }),
    email: Nullable(Type.String()),
    created_at: Timestamp,
  }),
);

/** The user (docs/api.md §5.1), as packages/shared declares it. */
export const User = wireSchema<Wire.User>()(
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    email: Nullable(Type.String()),
    email_confirmed_at: Nullable(Timestamp),
    phone: Nullable(Type.String({ description: 'E.164' })),
    phone_confirmed_at: Nullable(Timestamp),
    name: Nullable(Type.String()),
    avatar: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_sign_in_at: Nullable(Timestamp),
    identities: Type.Array(Identity),
  }),
);

/** A session: what every sign-in and refresh answers. */
export const Session = wireSchema<Wire.Session>()(
  Type.Object({
    access_token: Type.String({ description: 'A JWT (ES256) for `Authorization: Bearer …`.' }),
    token_type: Type.Literal('bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
    expires_at: Type.Integer({ description: 'When the access token expires, in seconds since 1970.' }),
    refresh_token: Type.String(),
    user: User,
    next_aal: Type.Optional(
      Type.Union([Type.Literal('aal1'), Type.Literal('aal2')], {
        description: '`aal2` when the user has a verified second factor: an `aal1` session must verify it before the API answers it.',
      }),
    ),
  }),
);

/** A second factor (docs/securing-accounts.md). */
export const Factor = wireSchema<Wire.Factor>()(
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    factor_type: Type.Union([Type.Literal('totp'), Type.Literal('webauthn')]),
    friendly_name: Nullable(Type.String()),
    status: Type.Union([Type.Literal('unverified'), Type.Literal('verified')]),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

/** A passkey of the user. */
export const Passkey = wireSchema<Wire.Passkey>()(
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    backed_up: Type.Boolean({ description: 'Synced by the platform (iCloud Keychain, Google Password Manager…).' }),
  }),
);

export const EnrolledFactor = wireSchema<Wire.EnrolledFactor>()(
  Type.Object({
    ...Factor.properties,
    totp: Type.Object(
      {
        secret: Type.String({ description: 'Base32, for typing into an authenticator app.' }),
        uri: Type.String({ description: '`otpauth://totp/…`' }),
        qr_code: Type.String({ description: 'The URI as a QR code: an SVG data URL.' }),
      },
      { description: 'Shown this once.' },
    ),
    passkeys: Type.Array(Passkey, {
      description: "The user's passkeys, each of which signs in at aal2 by itself (also one registered before the first factor).",
    }),
  }),
);

const Json = Type.Object({}, { additionalProperties: true, description: 'WebAuthn options as JSON (PublicKeyCredential*OptionsJSON).' });

const Empty = Type.Object({}, { additionalProperties: false, description: 'Answered alike whether the address is known or not.' });
const WithUser = Type.Object({ user: User });

const PROVIDERS = OAUTH_PROVIDERS;

/** `GET /v1/auth/settings`: what a sign-in page needs, no secrets. */
export const PublicSettings = Type.Object({
  email_password_enabled: Type.Boolean(),
  magic_link_enabled: Type.Boolean(),
  phone_enabled: Type.Boolean(),
  min_password_length: Type.Integer(),
  require_email_confirmation: Type.Boolean(),
  providers: Type.Object(
    Object.fromEntries(PROVIDERS.map((p) => [p, Type.Boolean()])) as Record<(typeof PROVIDERS)[number], ReturnType<typeof Type.Boolean>>,
  ),
  oidc_providers: Type.Array(
    Type.Object({
      id: Type.String({ description: 'What `signInWithOAuth(id)` and `/v1/auth/oauth/{id}` take.' }),
      name: Type.String({ description: 'What its sign-in button says.' }),
    }),
    { description: 'The enabled OpenID Connect providers of `oidc_providers`, in their order.' },
  ),
  passkeys: Type.Boolean({ description: 'Passkey sign-in and sign-up are on (`passkey_enabled`).' }),
  mfa_totp_enabled: Type.Boolean({ description: 'Users may enrol authenticator-app (TOTP) factors.' }),
});

/** Which social providers are on, for `GET /v1/auth/settings`. */
export function enabledProviders(providers: Record<(typeof PROVIDERS)[number], { enabled: boolean }>) {
  return Object.fromEntries(PROVIDERS.map((p) => [p, providers[p].enabled])) as Record<(typeof PROVIDERS)[number], boolean>;
}

const Jwk = Type.Object(
  {
    kty: Type.Optional(Type.String({ description: '`EC` (ES256 keys).' })),
    kid: Type.Optional(Type.String()),
    alg: Type.Optional(Type.String()),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

type Security = { [scheme: string]: string[] }[];
/** Any key of the project: `apikey: <public or secret key>`, or the key as `Authorization: Bearer`. */
const KEY: Security = [{ apikey: [] }, { bearer: [] }];
/** A user's access token (with or without the apikey). */
const USER: Security = [{ apikey: [], bearer: [] }, { bearer: [] }];
/** No key at all: public documents and browser navigations. */
const NONE: Security = [];

const route = <R extends Record<number, unknown>>(summary: string, security: Security, response: R) => ({ summary, security, response });
const signedOut = Type.Null({ description: 'Signed out.' });

/** One entry per `/v1/auth` route: its summary, who may call it, and what it answers. */
export const AUTH_DOCS = {
  signUp: route('Sign up with email and password', KEY, {
    200: Type.Object({ user: User, session: Nullable(Session) }, { description: '`session` is null while the email awaits confirmation.' }),
  }),
  signIn: route('Sign in with email and password', KEY, { 200: Session }),
  signOut: route('Sign out this session (or every session: `{"scope": "global"}`)', USER, { 204: signedOut }),
  refresh: route('Trade a refresh token for a new session', KEY, { 200: Session }),
  getUser: route('The signed-in user', USER, { 200: User }),
  patchUser: route('Change the signed-in user (a new email is applied once its link is used)', USER, { 200: User }),
  unlinkIdentity: route('Unlink a sign-in method (a provider, email or phone) under the reauthentication rule; never the last', USER, {
    200: User,
  }),
  reauthenticate: route('Send a 6-digit code for a password or email change (to the confirmed email, else phone)', USER, {
    200: Type.Object({ sent: Type.Literal(true), channel: Type.Union([Type.Literal('email'), Type.Literal('sms')]) }),
  }),
  verifyEmail: route('Confirm an email (or an email change) with the token of its link', KEY, { 200: WithUser }),
  resendVerification: route('Send a fresh verification link', KEY, { 200: Empty }),
  forgotPassword: route('Send a password reset link', KEY, { 200: Empty }),
  resetPassword: route('Set a new password with the token of a reset link', KEY, { 200: WithUser }),
  requestMagicLink: route('Send a sign-in link', KEY, { 200: Empty }),
  signInMagicLink: route('Sign in with the token of a magic link', KEY, { 200: Session }),
  sendOtp: route('Send a 6-digit code by SMS', KEY, { 200: Type.Object({ sent: Type.Literal(true) }) }),
  verifyOtp: route('Sign in with the code sent by SMS', KEY, { 200: Session }),
  listFactors: route("The signed-in user's second factors (an aal1 token may call this)", USER, {
    200: Type.Object({ factors: Type.Array(Factor) }),
  }),
  enrollFactor: route('Enrol a TOTP or WebAuthn factor (aal2 when the user has a verified factor)', USER, {
    200: Type.Union([
      EnrolledFactor,
      Type.Object(
        { ...Factor.properties, passkeys: EnrolledFactor.properties.passkeys },
        { description: 'A WebAuthn factor: answer its first challenge with the credential the authenticator creates.' },
      ),
    ]),
  }),
  challengeFactor: route('Start a challenge of a factor (5 minutes, 5 wrong codes)', USER, {
    200: Type.Object({
      id: Type.String({ format: 'uuid' }),
      expires_at: Type.Integer({ description: 'Epoch seconds.' }),
      webauthn: Type.Optional(
        Type.Object(
          { type: Type.Union([Type.Literal('create'), Type.Literal('request')]), options: Json },
          { description: "A WebAuthn factor's: creation options while unverified, request options after." },
        ),
      ),
    }),
  }),
  verifyFactor: route('Verify a challenge with a code (or a WebAuthn factor with `credential`): a new session at aal2', USER, {
    200: Session,
  }),
  unenrollFactor: route('Remove a factor (aal2 when the user has a verified factor)', USER, {
    200: Type.Object({ id: Type.String({ format: 'uuid' }) }),
  }),
  recoveryCodes: route('10 new single-use recovery codes (aal2; the old set is void)', USER, {
    200: Type.Object({ codes: Type.Array(Type.String(), { description: 'Shown this once.' }) }),
  }),
  recover: route('Use a recovery code: a new session at aal2', USER, { 200: Session }),
  passkeyRegisterOptions: route('WebAuthn creation options for a new passkey of the signed-in user', USER, { 200: Json }),
  passkeyRegisterVerify: route('Store the passkey the browser created', USER, { 200: Passkey }),
  listPasskeys: route("The signed-in user's passkeys", USER, { 200: Type.Object({ passkeys: Type.Array(Passkey) }) }),
  renamePasskey: route('Rename a passkey', USER, { 200: Passkey }),
  removePasskey: route('Remove a passkey', USER, { 200: Type.Object({ id: Type.String({ format: 'uuid' }) }) }),
  passkeySigninOptions: route('WebAuthn request options for a passkey sign-in (username-less without email)', KEY, {
    200: Type.Object({ challenge_id: Type.String({ format: 'uuid' }), options: Json }),
  }),
  passkeySigninVerify: route('Sign in with a passkey: aal2 when the authenticator verified the user', KEY, { 200: Session }),
  passkeySignupOptions: route('WebAuthn creation options for a sign-up with a passkey alone', KEY, {
    200: Type.Object({ challenge_id: Type.String({ format: 'uuid' }), options: Json }),
  }),
  passkeySignupVerify: route('Sign up with a passkey: the email stays unproven until its link is used', KEY, {
    200: Type.Object({ user: User, session: Nullable(Session) }, { description: '`session` is null while the email awaits confirmation.' }),
  }),
  settings: route('The sign-in methods and providers that are on', NONE, { 200: PublicSettings }),
  jwks: route('The public keys that verify access tokens (JWKS)', NONE, { 200: Type.Object({ keys: Type.Array(Jwk) }) }),
  /** Browser navigations: documented as 302 by route-docs (`config.redirect`). */
  oauthStart: { summary: 'Start social sign-in: a redirect to the provider', security: NONE },
  oauthCallback: { summary: "The provider's redirect back: a redirect to the app, with the session in the fragment", security: NONE },
};
