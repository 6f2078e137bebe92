import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso } from '../../lib/index.js';
import type { AuthDeps } from '../deps.js';
import { createRelyingParty, invalid, uuidBytes, webauthn } from '../passkeys/webauthn.js';

/** A WebAuthn factor as verify reads it (its credential is null until the first verification). */
export interface WebAuthnFactorRow {
  status: string;
  credential_id: string | null;
  public_key: string | null;
  counter: string | null;
  transports: unknown;
  webauthn_challenge: string | null;
}

/** The two WebAuthn ceremonies of a factor: `create` registers its credential, `request` proves it. */
export type WebAuthnCeremony = 'create' | 'request';

/**
 * WebAuthn second factors (docs/securing-accounts.md): a security key or platform authenticator
 * as a factor, checked by the relying party passkeys use (passkeys/webauthn.ts: the project's
 * RP ID and origins, whatever the client says). Unlike a passkey it is not discoverable and
 * signs no one in by itself; it only raises a session to `aal2`.
 * @example const wa = createWebAuthnFactors(deps); const { type, options } = await wa.options(db, userId, factor);
 */
export function createWebAuthnFactors(deps: Pick<AuthDeps, 'settings' | 'tokens'>) {
  const rp = createRelyingParty(deps);

  return {
    /** Refuses when the project has no relying party (passkey_enabled off): 422 provider_disabled. */
    assertEnabled(): void {
      rp.party();
    },

    /**
     * The options of a new challenge: creation options while the factor is unverified (the
     * user's other credentials excluded: an authenticator registers once), request options for
     * the factor's own credential after.
     */
    async options(q: Queryable, userId: string, factor: { status: string; credential_id: string | null; transports: unknown }) {
      const { rpID, rpName } = rp.party();
      const lib = await webauthn();
      if (factor.status === 'verified' && factor.credential_id) {
        const { transports } = factor;
        const options = await lib.generateAuthenticationOptions({
          rpID,
          userVerification: 'preferred',
          allowCredentials: [{ id: factor.credential_id, transports: Array.isArray(transports) ? transports : undefined }],
        });
        return { type: 'request' as WebAuthnCeremony, options };
      }
      const { rows: users } = await q.query<{ label: string }>(
        'select coalesce(email, phone, id::text) as label from auth.users where id = $1',
        [userId],
      );
      const { rows: existing } = await q.query<{ id: string }>(
        `select credential_id as id from auth.passkeys where user_id = $1
         union all select credential_id from auth.mfa_factors where user_id = $1 and credential_id is not null`,
        [userId],
      );
      const options = await lib.generateRegistrationOptions({
        rpName,
        rpID,
        userName: users[0]?.label ?? userId,
        userID: uuidBytes(userId),
        attestationType: 'none',
        excludeCredentials: existing.map((k) => ({ id: k.id })),
        authenticatorSelection: { residentKey: 'discouraged', userVerification: 'preferred' },
      });
      return { type: 'create' as WebAuthnCeremony, options };
    },

    /**
     * Checks a challenge's answer in verify's transaction: the first one stores the factor's
     * credential, later ones must be signed by it with a growing counter. Null when it verifies,
     * else the refusal (400 passkey_invalid), returned so the spent challenge is kept spent.
     */
    async check(tx: Queryable, factorId: string, row: WebAuthnFactorRow, credential: unknown, now: number): Promise<ApiError | null> {
      if (!row.webauthn_challenge) return invalid('This challenge is not a WebAuthn challenge; ask for a new one.');
      try {
        if (row.status !== 'verified' || !row.credential_id || !row.public_key) {
          const info = await rp.verifyRegistration(credential, row.webauthn_challenge);
          const { rows } = await tx.query(
            `update auth.mfa_factors set credential_id = $2, public_key = $3, counter = $4, transports = $5::jsonb, updated_at = $6::timestamptz
             where id = $1 and not exists (select 1 from auth.mfa_factors o where o.credential_id = $2)
               and not exists (select 1 from auth.passkeys k where k.credential_id = $2) returning id`,
            [
              factorId,
              info.credential.id,
              Buffer.from(info.credential.publicKey).toString('base64url'),
              info.credential.counter,
              JSON.stringify(info.credential.transports ?? []),
              iso(now),
            ],
          );
          return rows.length ? null : invalid('This authenticator is registered already.');
        }
        const info = await rp.verifyAssertion(credential, row.webauthn_challenge, {
          id: row.credential_id,
          publicKey: row.public_key,
          counter: Number(row.counter ?? 0),
          transports: row.transports,
        });
        const { rows } = await tx.query(
          `update auth.mfa_factors set counter = $2 where id = $1 and ((coalesce(counter, 0) = 0 and $2 = 0) or $2 > coalesce(counter, 0)) returning id`,
          [factorId, info.newCounter],
        );
        return rows.length ? null : invalid('The signature counter went back: this authenticator may have been cloned.');
      } catch (err) {
        if (err instanceof ApiError) return err;
        throw err;
      }
    },
  };
}

export type WebAuthnFactors = ReturnType<typeof createWebAuthnFactors>;
