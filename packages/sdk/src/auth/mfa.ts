import type { AuthenticatorAssuranceLevel, AuthMethodReference, EnrolledFactor, Factor, Result, Session } from '../types.js';
import { type AuthContext, callAsUser, completeSignIn, type SignInData } from './context.js';

/** What `getAuthenticatorAssuranceLevel()` answers (names as supabase-js). */
export interface AssuranceLevel {
  /** The level of the signed-in session (null when signed out). */
  currentLevel: AuthenticatorAssuranceLevel | null;
  /** The level this user can reach: `aal2` when they have a verified factor (step up while current is `aal1`). */
  nextLevel: AuthenticatorAssuranceLevel | null;
  /** How the session was authenticated (the access token's `amr`). */
  currentAuthenticationMethods: AuthMethodReference[];
}

/** The claims of a JWT, read without verifying (the server verifies; this only shows the level). */
function claimsOf(token: string): Record<string, unknown> {
  try {
    const part = token.split('.')[1] ?? '';
    const b64 = part
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(part.length / 4) * 4, '=');
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * `client.auth.mfa`: second factors (TOTP authenticator apps) and recovery codes, as
 * supabase-js names them. A user with a verified factor gets `aal1` sessions from every other
 * sign-in; the server answers them 403 `mfa_required` until `challengeAndVerify` (or a passkey,
 * or a recovery code) gives an `aal2` session.
 */
export class MfaApi {
  constructor(private readonly ctx: AuthContext) {}

  /**
   * Starts a TOTP factor: show `data.totp.qr_code` (an `<img src>`) or `data.totp.secret`, then
   * `challengeAndVerify` with the app's first code.
   * @example const { data } = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' }); img.src = data.totp.qr_code;
   */
  enroll(params: { factorType: 'totp'; friendlyName?: string }): Promise<Result<EnrolledFactor>> {
    return callAsUser<EnrolledFactor>(this.ctx, {
      method: 'POST',
      path: '/v1/auth/factors',
      body: { factor_type: params.factorType, ...(params.friendlyName ? { friendly_name: params.friendlyName } : {}) },
    });
  }

  /** @example const { data } = await client.auth.mfa.challenge({ factorId }); // data.id: the challenge */
  challenge(params: { factorId: string }): Promise<Result<{ id: string; expires_at: number }>> {
    return callAsUser(this.ctx, { method: 'POST', path: `/v1/auth/factors/${encodeURIComponent(params.factorId)}/challenge`, body: {} });
  }

  /**
   * Verifies a challenge with the app's code: the session is replaced by an `aal2` one
   * (event MFA_CHALLENGE_VERIFIED).
   * @example await client.auth.mfa.verify({ factorId, challengeId, code: '123456' });
   */
  async verify(params: { factorId: string; challengeId: string; code: string }): Promise<Result<SignInData>> {
    const res = await callAsUser<Session>(this.ctx, {
      method: 'POST',
      path: `/v1/auth/factors/${encodeURIComponent(params.factorId)}/verify`,
      body: { challenge_id: params.challengeId, code: params.code },
    });
    return completeSignIn(this.ctx, res, 'MFA_CHALLENGE_VERIFIED');
  }

  /** @example const { data, error } = await client.auth.mfa.challengeAndVerify({ factorId, code }); */
  async challengeAndVerify(params: { factorId: string; code: string }): Promise<Result<SignInData>> {
    const c = await this.challenge({ factorId: params.factorId });
    if (c.error) return c;
    return this.verify({ factorId: params.factorId, challengeId: c.data.id, code: params.code });
  }

  /**
   * Removes a factor (needs `aal2` while the user has a verified one). With the last one gone
   * the session is refreshed: it is `aal1` now.
   * @example await client.auth.mfa.unenroll({ factorId });
   */
  async unenroll(params: { factorId: string }): Promise<Result<{ id: string }>> {
    const res = await callAsUser<{ id: string }>(this.ctx, {
      method: 'DELETE',
      path: `/v1/auth/factors/${encodeURIComponent(params.factorId)}`,
    });
    if (!res.error) await this.ctx.session.refresh();
    return res;
  }

  /**
   * The user's factors: `all`, and the verified TOTP ones in `totp`.
   * @example const { data } = await client.auth.mfa.listFactors(); if (data.totp.length) …
   */
  async listFactors(): Promise<Result<{ all: Factor[]; totp: Factor[] }>> {
    const res = await callAsUser<{ factors: Factor[] }>(this.ctx, { path: '/v1/auth/factors' });
    if (res.error) return res;
    return {
      data: { all: res.data.factors, totp: res.data.factors.filter((f) => f.factor_type === 'totp' && f.status === 'verified') },
      error: null,
    };
  }

  /**
   * The session's level and the one the user can reach, read from the stored session (one
   * request only for a session that came without `next_aal`: a social sign-in's redirect).
   * @example const { data } = await client.auth.mfa.getAuthenticatorAssuranceLevel(); if (data.nextLevel === 'aal2' && data.currentLevel !== 'aal2') showCodePrompt();
   */
  async getAuthenticatorAssuranceLevel(): Promise<Result<AssuranceLevel>> {
    const session = await this.ctx.session.getValidSession();
    if (session.error) return session;
    if (!session.data) return { data: { currentLevel: null, nextLevel: null, currentAuthenticationMethods: [] }, error: null };
    const claims = claimsOf(session.data.access_token);
    const currentLevel: AuthenticatorAssuranceLevel = claims.aal === 'aal2' ? 'aal2' : 'aal1';
    let nextLevel = session.data.next_aal;
    if (!nextLevel) {
      // A session from a social sign-in's redirect carries no next_aal: ask for the factors.
      const factors = await this.listFactors();
      if (factors.error) return factors;
      nextLevel = factors.data.totp.length ? 'aal2' : currentLevel;
    }
    return {
      data: {
        currentLevel,
        nextLevel,
        currentAuthenticationMethods: Array.isArray(claims.amr) ? (claims.amr as AuthMethodReference[]) : [],
      },
      error: null,
    };
  }

  /**
   * 10 single-use recovery codes (needs `aal2`); show them once. A new set voids the old.
   * @example const { data } = await client.auth.mfa.generateRecoveryCodes(); show(data.codes);
   */
  generateRecoveryCodes(): Promise<Result<{ codes: string[] }>> {
    return callAsUser(this.ctx, { method: 'POST', path: '/v1/auth/factors/recovery-codes', body: {} });
  }

  /**
   * Uses a recovery code instead of the factor (from an `aal1` session): an `aal2` session.
   * @example await client.auth.mfa.recover({ code: 'abcd-efgh-ijkl-mnop' });
   */
  async recover(params: { code: string }): Promise<Result<SignInData>> {
    const res = await callAsUser<Session>(this.ctx, { method: 'POST', path: '/v1/auth/factors/recover', body: { code: params.code } });
    return completeSignIn(this.ctx, res, 'MFA_CHALLENGE_VERIFIED');
  }
}
