import { Type } from '@sinclair/typebox';
import type { App } from '../http/index.js';
import type { AuthGuards } from './guards.js';
import { AUTH_DOCS } from './responses.js';
import { createPasswordHandlers, EmailBody, ResetBody, SignInBody, SignUpBody } from './password/routes.js';
import type { PasswordService } from './password/service.js';
import { RefreshBody, createSessionHandlers } from './sessions/routes.js';
import type { SessionService } from './sessions/service.js';
import { UserPatchBody, createUserHandlers } from './users/routes.js';
import type { UserService } from './users/service.js';
import { ResendBody, TokenBody, createVerificationHandlers } from './verification/routes.js';
import type { VerificationService } from './verification/service.js';
import { MagicLinkRequestBody, MagicLinkSignInBody, createMagicLinkHandlers } from './magic-link/routes.js';
import type { MagicLinkService } from './magic-link/service.js';
import { createPhoneHandlers, SendCodeBody, VerifyCodeBody } from './phone/routes.js';
import type { PhoneService } from './phone/service.js';
import { acceptForms, type OAuthService, createOAuthHandlers, StartQuery } from './oauth/index.js';
import type { createPublicHandlers } from './public.js';
import { createMfaHandlers, EnrollBody, FactorParams, RecoverBody, VerifyFactorBody } from './mfa/routes.js';
import type { MfaService } from './mfa/service.js';
import {
  CeremonyBody,
  createPasskeyHandlers,
  PasskeyParams,
  RegisterVerifyBody,
  RenameBody,
  SignInOptionsBody,
  SignUpOptionsBody,
} from './passkeys/routes.js';
import type { PasskeyService } from './passkeys/service.js';
import type { AnonymousService } from './anonymous/service.js';

export interface AuthServices {
  password: PasswordService;
  sessions: SessionService;
  users: UserService;
  verification: VerificationService;
  magicLink: MagicLinkService;
  phone: PhoneService;
  oauth: OAuthService;
  mfa: MfaService;
  passkeys: PasskeyService;
  anonymous: AnonymousService;
  public: ReturnType<typeof createPublicHandlers>;
}

/**
 * The route table of end-user auth (docs/api.md §5): one line per endpoint, guard on the line.
 * `apikey`: any key of the project; `user`: a user access token of an open session, `aal2`
 * when its user has a verified second factor (else 403 `mfa_required`); `stepUp`: the same but
 * an `aal1` token passes (what a user who must step up may still do).
 */
export function registerAuthRoutes(app: App, guards: AuthGuards, s: AuthServices): void {
  const password = createPasswordHandlers(s.password);
  const sessions = createSessionHandlers(s.sessions);
  const users = createUserHandlers(s.users);
  const verification = createVerificationHandlers(s.verification);
  const magic = createMagicLinkHandlers(s.magicLink);
  const phone = createPhoneHandlers(s.phone);
  const mfa = createMfaHandlers(s.mfa);
  const passkeys = createPasskeyHandlers(s.passkeys);
  const { apikey, user, stepUp } = guards;

  app.post('/v1/auth/signup', { preHandler: apikey, schema: { body: SignUpBody, ...AUTH_DOCS.signUp } }, password.signUp);
  app.post('/v1/auth/signin', { preHandler: apikey, schema: { body: SignInBody, ...AUTH_DOCS.signIn } }, password.signIn);
  app.post('/v1/auth/signout', { preHandler: stepUp, schema: AUTH_DOCS.signOut }, sessions.signOut);
  app.post('/v1/auth/refresh', { preHandler: apikey, schema: { body: RefreshBody, ...AUTH_DOCS.refresh } }, sessions.refresh);
  app.get('/v1/auth/user', { preHandler: stepUp, schema: AUTH_DOCS.getUser }, users.get);
  app.patch('/v1/auth/user', { preHandler: user, schema: { body: UserPatchBody, ...AUTH_DOCS.patchUser } }, users.patch);
  app.post('/v1/auth/reauthenticate', { preHandler: user, schema: AUTH_DOCS.reauthenticate }, users.reauthenticate);
  app.delete('/v1/auth/identities/:provider', { preHandler: user, schema: AUTH_DOCS.unlinkIdentity }, users.unlink);
  app.post('/v1/auth/verify-email', { preHandler: apikey, schema: { body: TokenBody, ...AUTH_DOCS.verifyEmail } }, verification.verify);
  app.post(
    '/v1/auth/resend-verification',
    { preHandler: apikey, schema: { body: ResendBody, ...AUTH_DOCS.resendVerification } },
    verification.resend,
  );
  app.post('/v1/auth/forgot-password', { preHandler: apikey, schema: { body: EmailBody, ...AUTH_DOCS.forgotPassword } }, password.forgot);
  app.post('/v1/auth/reset-password', { preHandler: apikey, schema: { body: ResetBody, ...AUTH_DOCS.resetPassword } }, password.reset);
  app.post(
    '/v1/auth/request-magic-link',
    { preHandler: apikey, schema: { body: MagicLinkRequestBody, ...AUTH_DOCS.requestMagicLink } },
    magic.request,
  );
  app.post(
    '/v1/auth/signin-magic-link',
    { preHandler: apikey, schema: { body: MagicLinkSignInBody, ...AUTH_DOCS.signInMagicLink } },
    magic.signIn,
  );
  app.post('/v1/auth/phone/send-otp', { preHandler: apikey, schema: { body: SendCodeBody, ...AUTH_DOCS.sendOtp } }, phone.send);
  app.post('/v1/auth/phone/verify', { preHandler: apikey, schema: { body: VerifyCodeBody, ...AUTH_DOCS.verifyOtp } }, phone.verify);

  // Second factors (docs/securing-accounts.md).
  app.get('/v1/auth/factors', { preHandler: stepUp, schema: AUTH_DOCS.listFactors }, mfa.list);
  app.post('/v1/auth/factors', { preHandler: user, schema: { body: EnrollBody, ...AUTH_DOCS.enrollFactor } }, mfa.enroll);
  app.post('/v1/auth/factors/recovery-codes', { preHandler: user, schema: AUTH_DOCS.recoveryCodes }, mfa.recoveryCodes);
  app.post('/v1/auth/factors/recover', { preHandler: stepUp, schema: { body: RecoverBody, ...AUTH_DOCS.recover } }, mfa.recover);
  app.post(
    '/v1/auth/factors/:id/challenge',
    { preHandler: stepUp, schema: { params: FactorParams, ...AUTH_DOCS.challengeFactor } },
    mfa.challenge,
  );
  app.post(
    '/v1/auth/factors/:id/verify',
    { preHandler: stepUp, schema: { params: FactorParams, body: VerifyFactorBody, ...AUTH_DOCS.verifyFactor } },
    mfa.verify,
  );
  app.delete('/v1/auth/factors/:id', { preHandler: user, schema: { params: FactorParams, ...AUTH_DOCS.unenrollFactor } }, mfa.unenroll);

  // Passkeys (WebAuthn).
  app.post('/v1/auth/passkeys/register/options', { preHandler: user, schema: AUTH_DOCS.passkeyRegisterOptions }, passkeys.registerOptions);
  app.post(
    '/v1/auth/passkeys/register/verify',
    { preHandler: user, schema: { body: RegisterVerifyBody, ...AUTH_DOCS.passkeyRegisterVerify } },
    passkeys.registerVerify,
  );
  app.get('/v1/auth/passkeys', { preHandler: user, schema: AUTH_DOCS.listPasskeys }, passkeys.list);
  app.patch(
    '/v1/auth/passkeys/:id',
    { preHandler: user, schema: { params: PasskeyParams, body: RenameBody, ...AUTH_DOCS.renamePasskey } },
    passkeys.rename,
  );
  app.delete('/v1/auth/passkeys/:id', { preHandler: user, schema: { params: PasskeyParams, ...AUTH_DOCS.removePasskey } }, passkeys.remove);
  app.post(
    '/v1/auth/passkeys/signin/options',
    { preHandler: apikey, schema: { body: Type.Optional(SignInOptionsBody), ...AUTH_DOCS.passkeySigninOptions } },
    passkeys.signInOptions,
  );
  app.post(
    '/v1/auth/passkeys/signin/verify',
    { preHandler: apikey, schema: { body: CeremonyBody, ...AUTH_DOCS.passkeySigninVerify } },
    passkeys.signInVerify,
  );
  app.post(
    '/v1/auth/passkeys/signup/options',
    { preHandler: apikey, schema: { body: SignUpOptionsBody, ...AUTH_DOCS.passkeySignupOptions } },
    passkeys.signUpOptions,
  );
  app.post(
    '/v1/auth/passkeys/signup/verify',
    { preHandler: apikey, schema: { body: CeremonyBody, ...AUTH_DOCS.passkeySignupVerify } },
    passkeys.signUpVerify,
  );

  // A browser navigates to these (no apikey); the callback also takes Apple's form_post.
  const oauth = createOAuthHandlers(s.oauth);
  app.register(async (forms) => {
    acceptForms(forms as unknown as App);
    forms.get(
      '/v1/auth/oauth/:provider',
      { schema: { querystring: StartQuery, ...AUTH_DOCS.oauthStart }, config: { redirect: true } },
      oauth.start,
    );
    forms.get('/v1/auth/oauth/:provider/callback', { schema: AUTH_DOCS.oauthCallback, config: { redirect: true } }, oauth.callback);
    forms.post('/v1/auth/oauth/:provider/callback', { schema: AUTH_DOCS.oauthCallback, config: { redirect: true } }, oauth.callback);
  });

  // Public, no key and no per-IP limit: what a sign-in page may offer, and the token-verifying keys.
  app.get('/v1/auth/settings', { schema: AUTH_DOCS.settings, config: { rateLimit: false } }, s.public.settings);
  app.get('/v1/auth/.well-known/jwks.json', { schema: AUTH_DOCS.jwks, config: { rateLimit: false } }, s.public.jwks);
}
