import type {
  AuthenticationResponseJSON,
  RegistrationResponseJSON,
  VerifiedAuthenticationResponse,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import { ApiError } from '../../http/index.js';
import type { AuthDeps } from '../deps.js';

/** Loaded at the first WebAuthn request, not at start: 0.3–0.4 s of a start's module loading (issue 32). */
export const webauthn = () => import('@simplewebauthn/server');

/** The 16 bytes of a uuid: the WebAuthn user handle of a Plinth user. */
export const uuidBytes = (id: string) => new Uint8Array(Buffer.from(id.replace(/-/g, ''), 'hex'));

/** A WebAuthn answer that does not verify (400 passkey_invalid). */
export const invalid = (why: string, details?: unknown) => new ApiError('passkey_invalid', why, details);
/**
 * A ceremony's challenge that is unknown, expired, used, or another user's: passkey_invalid
 * naming `challenge_id`, so a caller (the /auth/v1 face) can tell it from a signature that fails.
 */
export const challengeGone = (why: string) => invalid(why, [{ field: 'challenge_id', message: 'unknown, expired or used' }]);

/**
 * A credential's JSON with a base64url id (the id is looked up in the database: a NUL or other
 * text there is refused here as a 400, not by PostgreSQL as a 500).
 */
export const isCredential = (c: unknown): c is { id: string; rawId: string; response: Record<string, unknown>; type: string } =>
  typeof c === 'object' &&
  c !== null &&
  typeof (c as { id?: unknown }).id === 'string' &&
  /^[A-Za-z0-9_-]{1,1024}$/.test((c as { id: string }).id) &&
  typeof (c as { response?: unknown }).response === 'object';

/** A verified registration: the new credential, its AAGUID and backup state. */
export type NewCredential = NonNullable<VerifiedRegistrationResponse['registrationInfo']>;
/** A verified assertion: the new counter, whether the user was verified. */
export type Assertion = VerifiedAuthenticationResponse['authenticationInfo'];

/** The transports a stored credential lists (jsonb, read as an array). */
type Transports = NonNullable<
  Parameters<typeof import('@simplewebauthn/server')['verifyAuthenticationResponse']>[0]['credential']['transports']
>;

/** A stored credential: what an assertion is checked against. */
export interface StoredCredential {
  id: string;
  publicKey: string;
  counter: number;
  transports: unknown;
}

/**
 * The relying party of every WebAuthn ceremony, passkeys and WebAuthn second factors alike
 * (docs/securing-accounts.md): the RP ID is the host of PUBLIC_URL (or `passkey_rp_id`), the
 * accepted origins PUBLIC_URL's and `passkey_origins`, whatever a client says they are; both
 * ceremonies are checked here and only here.
 * @example const rp = createRelyingParty(deps); const info = await rp.verifyRegistration(credential, challenge);
 */
export function createRelyingParty(deps: Pick<AuthDeps, 'settings' | 'tokens'>) {
  const { settings } = deps;
  const publicUrl = new URL(deps.tokens.issuer);

  function party() {
    const s = settings.auth();
    if (!s.passkey_enabled) throw new ApiError('provider_disabled', 'Passkeys are off for this project (passkey_enabled).');
    return {
      rpID: s.passkey_rp_id ?? publicUrl.hostname,
      origins: [publicUrl.origin, ...s.passkey_origins],
      rpName: settings.project().name,
    };
  }

  return {
    party,

    /** Checks a registration answer against the stored challenge; the new credential, or 400 passkey_invalid. */
    async verifyRegistration(credential: unknown, expectedChallenge: string): Promise<NewCredential> {
      const { rpID, origins } = party();
      if (!isCredential(credential)) throw invalid('credential must be the JSON of the PublicKeyCredential the browser created.');
      try {
        const result = await (await webauthn()).verifyRegistrationResponse({
          response: credential as unknown as RegistrationResponseJSON,
          expectedChallenge,
          expectedOrigin: origins,
          expectedRPID: rpID,
          requireUserVerification: false,
        });
        if (!result.verified) throw invalid('The passkey could not be verified.');
        return result.registrationInfo;
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw invalid(`The passkey could not be verified: ${(err as Error).message}`);
      }
    },

    /** Checks an assertion by a stored credential against the stored challenge; its info, or 400 passkey_invalid. */
    async verifyAssertion(credential: unknown, expectedChallenge: string, key: StoredCredential): Promise<Assertion> {
      const { rpID, origins } = party();
      if (!isCredential(credential) || credential.id !== key.id)
        throw invalid('credential must be the JSON of the PublicKeyCredential the browser returned.');
      const { transports } = key;
      try {
        const result = await (await webauthn()).verifyAuthenticationResponse({
          response: credential as unknown as AuthenticationResponseJSON,
          expectedChallenge,
          expectedOrigin: origins,
          expectedRPID: rpID,
          credential: {
            id: key.id,
            publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64url')),
            counter: key.counter,
            transports: Array.isArray(transports) ? (transports as Transports) : undefined,
          },
          requireUserVerification: false,
        });
        if (!result.verified) throw invalid('The passkey could not be verified.');
        return result.authenticationInfo;
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw invalid(`The passkey could not be verified: ${(err as Error).message}`);
      }
    },
  };
}

export type RelyingParty = ReturnType<typeof createRelyingParty>;
