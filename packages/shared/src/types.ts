/** Types that cross the network (docs/api.md §5.1). */

export interface Identity {
  provider: string;
  email: string | null;
  created_at: string;
}

export interface User {
  id: string;
  email: string | null;
  email_confirmed_at: string | null;
  phone: string | null;
  phone_confirmed_at: string | null;
  name: string | null;
  avatar: string | null;
  created_at: string;
  updated_at: string;
  last_sign_in_at: string | null;
  identities: Identity[];
}

export interface Session {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: User;
  /**
   * The level this user can reach (docs/securing-accounts.md): `aal2` when they have a verified
   * second factor (an `aal1` session must then verify one before the API answers it), else the
   * session's own level.
   */
  next_aal?: AuthenticatorAssuranceLevel;
}

/** `aal1`: one factor (a password, a link, a code, a provider); `aal2`: a second factor or a passkey with user verification. */
export type AuthenticatorAssuranceLevel = 'aal1' | 'aal2';

/** How a session was authenticated (the access token's `amr` claim). */
export interface AuthMethodReference {
  method: 'password' | 'magic_link' | 'otp' | 'oauth' | 'totp' | 'passkey' | 'recovery';
  /** Epoch seconds. */
  timestamp: number;
}

/** A second factor (`GET /v1/auth/factors`). */
export interface Factor {
  id: string;
  /** `webauthn`: a security key or platform authenticator (enrolled and verified with WebAuthn). */
  factor_type: 'totp' | 'webauthn';
  friendly_name: string | null;
  status: 'unverified' | 'verified';
  created_at: string;
  updated_at: string;
}

/** What `POST /v1/auth/factors` answers: the secret is shown this once. */
export interface EnrolledFactor extends Factor {
  totp: {
    /** Base32, for typing into an authenticator app. */
    secret: string;
    /** `otpauth://totp/…` */
    uri: string;
    /** The URI as a QR code: an SVG data URL (`<img src>`). */
    qr_code: string;
  };
  /**
   * The user's passkeys: each signs in at `aal2` by itself, also one registered before the first
   * factor, so show them to the user at enrolment (one they do not know is removed with
   * `DELETE /v1/auth/passkeys/{id}`).
   */
  passkeys: Passkey[];
}

/** A passkey of the user (`GET /v1/auth/passkeys`). */
export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  /** Synced by the platform (iCloud Keychain, Google Password Manager…). */
  backed_up: boolean;
}

export interface Keys {
  public_key: string;
  secret_key: string;
}

export type Plan = 'free' | 'pro' | 'team' | 'enterprise';
