import type { AuthChangeEvent, OAuthProvider, Result, Session, User } from '../types.js';
import type { AuthContext, SignInData } from './context.js';
import type { AuthStateCallback, AuthSubscription } from './events.js';
import { type MagicLinkOptions, requestMagicLink, signInWithMagicLink } from './magic-link.js';
import { handleOAuthCallback, type SignInWithOAuthOptions, signInWithOAuth } from './oauth.js';
import { forgotPassword, resetPassword, type SignUpCredentials, type SignUpData, signIn, signUp } from './password.js';
import { MfaApi } from './mfa.js';
import { PasskeysApi, signInWithPasskey, signUpWithPasskey } from './passkeys.js';
import { sendPhoneCode, verifyPhoneCode } from './phone.js';
import { getSession, refreshSession, signOut } from './session.js';
import { getUser, reauthenticate, type UserAttributes, updateUser } from './user.js';
import { resendVerification, verifyEmail } from './verification.js';

/**
 * `client.auth`: end-user authentication. Every method resolves to `{data, error}` and never
 * throws; each one lives in its own file next to this one.
 */
export class AuthClient {
  /** Second factors (TOTP) and recovery codes: `enroll`, `challengeAndVerify`, `getAuthenticatorAssuranceLevel`… */
  readonly mfa: MfaApi;
  /** The signed-in user's passkeys: `register`, `list`, `rename`, `remove`. */
  readonly passkeys: PasskeysApi;

  constructor(private readonly ctx: AuthContext) {
    this.mfa = new MfaApi(ctx);
    this.passkeys = new PasskeysApi(ctx);
  }

  /**
   * Signs in with a passkey; without `email` the browser offers the passkeys it holds for this site.
   * @example const { data, error } = await client.auth.signInWithPasskey();
   */
  signInWithPasskey(params?: { email?: string }): Promise<Result<SignInData>> {
    return signInWithPasskey(this.ctx, params);
  }

  /**
   * Signs up with a passkey alone (the address stays unproven until its link is used).
   * @example const { data, error } = await client.auth.signUpWithPasskey({ email: 'ada@example.com' });
   */
  signUpWithPasskey(params: {
    email: string;
    name?: string;
    emailRedirectTo?: string;
  }): Promise<Result<{ user: User; session: Session | null }>> {
    return signUpWithPasskey(this.ctx, params);
  }

  /** @example const { data, error } = await client.auth.signUp({ email, password, emailRedirectTo: 'https://app.example.com/verify' }); */
  signUp(credentials: SignUpCredentials): Promise<Result<SignUpData>> {
    return signUp(this.ctx, credentials);
  }

  /** @example const { data, error } = await client.auth.signIn({ email, password }); */
  signIn(credentials: { email: string; password: string }): Promise<Result<SignInData>> {
    return signIn(this.ctx, credentials);
  }

  /** @example await client.auth.signOut(); await client.auth.signOut({ scope: 'global' }); */
  signOut(options?: { scope?: 'local' | 'global' }): Promise<Result<null>> {
    return signOut(this.ctx, options);
  }

  /**
   * Subscribes to auth events. The callback first receives INITIAL_SESSION, then SIGNED_IN,
   * SIGNED_OUT, TOKEN_REFRESHED, USER_UPDATED, PASSWORD_RECOVERY and MFA_CHALLENGE_VERIFIED (an
   * `aal2` session after a second factor or a recovery code), also those caused in other
   * tabs. Callbacks run asynchronously, outside the SDK's lock, so they may call (and await)
   * any client method.
   * @example const { data } = client.auth.onAuthStateChange((event, session) => render(session)); data.subscription.unsubscribe();
   */
  onAuthStateChange(callback: (event: AuthChangeEvent, session: Session | null) => void | Promise<void>): AuthSubscription {
    return this.ctx.session.events.subscribe(callback as AuthStateCallback);
  }

  /** @example const { error } = await client.auth.verifyEmail(new URLSearchParams(location.search).get('token')!); */
  verifyEmail(token: string): Promise<Result<{ user: User }>> {
    return verifyEmail(this.ctx, token);
  }

  /** @example await client.auth.resendVerification('a@example.com'); */
  resendVerification(email: string): Promise<Result<null>> {
    return resendVerification(this.ctx, email);
  }

  /** @example await client.auth.forgotPassword('a@example.com'); */
  forgotPassword(email: string): Promise<Result<null>> {
    return forgotPassword(this.ctx, email);
  }

  /** @example const { error } = await client.auth.resetPassword(token, 'a new long secret'); */
  resetPassword(token: string, newPassword: string): Promise<Result<{ user: User }>> {
    return resetPassword(this.ctx, token, newPassword);
  }

  /**
   * Emails a sign-in link to the project's `magic_link_url`, or to `options.emailRedirectTo`
   * (an allowed redirect URL) for this request.
   * @example await client.auth.requestMagicLink('a@example.com', { emailRedirectTo: 'https://app.example.com/magic' });
   */
  requestMagicLink(email: string, options?: MagicLinkOptions): Promise<Result<null>> {
    return requestMagicLink(this.ctx, email, options);
  }

  /** @example const { data, error } = await client.auth.signInWithMagicLink(token); */
  signInWithMagicLink(token: string): Promise<Result<SignInData>> {
    return signInWithMagicLink(this.ctx, token);
  }

  /** @example await client.auth.signInWithOAuth('google', { redirectTo: 'https://app.example.com/callback' }); */
  signInWithOAuth(provider: OAuthProvider, options?: SignInWithOAuthOptions): Promise<Result<{ provider: OAuthProvider; url: string }>> {
    return signInWithOAuth(this.ctx, provider, options);
  }

  /** @example const { data, error } = await client.auth.handleOAuthCallback(); */
  handleOAuthCallback(url?: string): Promise<Result<SignInData>> {
    return handleOAuthCallback(this.ctx, url);
  }

  /** @example const { error } = await client.auth.sendPhoneCode('+46701234567'); */
  sendPhoneCode(phone: string): Promise<Result<{ sent: boolean }>> {
    return sendPhoneCode(this.ctx, phone);
  }

  /** @example const { data, error } = await client.auth.verifyPhoneCode('+46701234567', '123456'); */
  verifyPhoneCode(phone: string, code: string): Promise<Result<SignInData>> {
    return verifyPhoneCode(this.ctx, phone, code);
  }

  /** @example const { data } = await client.auth.getSession(); if (data?.session) console.log(data.session.user.id); */
  getSession(): Promise<Result<{ session: Session | null }>> {
    return getSession(this.ctx);
  }

  /** @example const { data, error } = await client.auth.getUser(); */
  getUser(): Promise<Result<{ user: User }>> {
    return getUser(this.ctx);
  }

  /** @example const { data, error } = await client.auth.updateUser({ name: 'Ada', avatar: 'https://…/ada.png' }); */
  updateUser(attributes: UserAttributes): Promise<Result<{ user: User }>> {
    return updateUser(this.ctx, attributes);
  }

  /**
   * Sends a code to the confirmed email (or phone) for a password or email change long after sign-in.
   * @example await client.auth.reauthenticate(); await client.auth.updateUser({ password: 'a new one', nonce: code });
   */
  reauthenticate(): Promise<Result<{ sent: true; channel: 'email' | 'sms' }>> {
    return reauthenticate(this.ctx);
  }

  /** @example const { data, error } = await client.auth.refreshSession(); */
  refreshSession(): Promise<Result<{ session: Session; user: User }>> {
    return refreshSession(this.ctx);
  }

  /**
   * Stops the refresh timer and the cross-tab channel and drops subscribers; the client can
   * still make requests. Call it when a page or test no longer needs the client.
   * @example client.auth.dispose();
   */
  dispose(): void {
    this.ctx.session.dispose();
  }
}
