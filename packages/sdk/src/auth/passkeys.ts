import type { Passkey, Result, Session, User } from '../types.js';
import { type AuthContext, call, callAsUser, completeSignIn, type SignInData } from './context.js';
import { toSession } from './storage.js';
import { createCredential, getCredential } from './webauthn.js';

type Json = Record<string, unknown>;

/**
 * `client.auth.passkeys`: the signed-in user's passkeys (WebAuthn, on the browser's own API).
 * Registering needs `aal2` while the user has a verified second factor.
 */
export class PasskeysApi {
  constructor(private readonly ctx: AuthContext) {}

  /**
   * Creates a passkey in the browser (the platform's dialog) and stores it for the signed-in user.
   * @example const { data, error } = await client.auth.passkeys.register({ name: 'MacBook' });
   */
  async register(params: { name?: string } = {}): Promise<Result<Passkey>> {
    const options = await callAsUser<Json>(this.ctx, { method: 'POST', path: '/v1/auth/passkeys/register/options', body: {} });
    if (options.error) return options;
    const credential = await createCredential(options.data);
    if (credential.error) return credential;
    return callAsUser<Passkey>(this.ctx, {
      method: 'POST',
      path: '/v1/auth/passkeys/register/verify',
      body: { credential: credential.data, ...(params.name ? { name: params.name } : {}) },
    });
  }

  /** @example const { data } = await client.auth.passkeys.list(); */
  async list(): Promise<Result<Passkey[]>> {
    const res = await callAsUser<{ passkeys: Passkey[] }>(this.ctx, { path: '/v1/auth/passkeys' });
    return res.error ? res : { data: res.data.passkeys, error: null };
  }

  /** @example await client.auth.passkeys.rename(id, 'Work laptop'); */
  rename(id: string, name: string): Promise<Result<Passkey>> {
    return callAsUser(this.ctx, { method: 'PATCH', path: `/v1/auth/passkeys/${encodeURIComponent(id)}`, body: { name } });
  }

  /** Removes a passkey: it signs no one in any more. @example await client.auth.passkeys.remove(id); */
  remove(id: string): Promise<Result<{ id: string }>> {
    return callAsUser(this.ctx, { method: 'DELETE', path: `/v1/auth/passkeys/${encodeURIComponent(id)}` });
  }
}

/**
 * Signs in with a passkey: without `email` the browser offers every passkey it holds for this
 * site (no username typed). A passkey with user verification (PIN, biometrics) is `aal2`.
 * @example const { data, error } = await signInWithPasskey(ctx);
 */
export async function signInWithPasskey(ctx: AuthContext, params: { email?: string } = {}): Promise<Result<SignInData>> {
  const start = await call<{ challenge_id: string; options: Json }>(ctx, {
    method: 'POST',
    path: '/v1/auth/passkeys/signin/options',
    body: params.email ? { email: params.email } : {},
  });
  if (start.error) return start;
  const credential = await getCredential(start.data.options);
  if (credential.error) return credential;
  return completeSignIn(
    ctx,
    await call<Session>(ctx, {
      method: 'POST',
      path: '/v1/auth/passkeys/signin/verify',
      body: { challenge_id: start.data.challenge_id, credential: credential.data },
    }),
  );
}

/**
 * Signs up with a passkey alone. The address stays unproven until its link is used; with
 * `require_email_confirmation` on, `session` is null until then.
 * @example const { data, error } = await signUpWithPasskey(ctx, { email: 'ada@example.com' });
 */
export async function signUpWithPasskey(
  ctx: AuthContext,
  params: { email: string; name?: string; emailRedirectTo?: string },
): Promise<Result<{ user: User; session: Session | null }>> {
  const start = await call<{ challenge_id: string; options: Json }>(ctx, {
    method: 'POST',
    path: '/v1/auth/passkeys/signup/options',
    body: { email: params.email, ...(params.emailRedirectTo ? { emailRedirectTo: params.emailRedirectTo } : {}) },
  });
  if (start.error) return start;
  const credential = await createCredential(start.data.options);
  if (credential.error) return credential;
  const res = await call<{ user: User; session: Session | null }>(ctx, {
    method: 'POST',
    path: '/v1/auth/passkeys/signup/verify',
    body: { challenge_id: start.data.challenge_id, credential: credential.data, ...(params.name ? { name: params.name } : {}) },
  });
  if (res.error || !res.data.session) return res;
  const signedIn = await completeSignIn(ctx, { data: res.data.session, error: null });
  return signedIn.error ? signedIn : { data: { user: res.data.user, session: toSession(res.data.session) }, error: null };
}
