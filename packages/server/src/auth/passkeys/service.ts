import type { Passkey, Session, User } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso, isoSql, isUuid } from '../../lib/index.js';
import { decoyUser, findCredentials, findUser } from '../accounts/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SignedIn } from '../guards.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { issueOneTimeTokenWithCode } from '../one-time.js';
import type { SessionService } from '../sessions/service.js';
import type { Assurance } from '../sessions/state.js';
import { allowedRedirect, normalizeEmail } from '../validate.js';

import { challengeGone, createRelyingParty, invalid, isCredential, uuidBytes, webauthn } from './webauthn.js';

const CHALLENGE_TTL_MS = 5 * 60_000;
/** A user may hold this many passkeys. */
export const MAX_PASSKEYS = 20;
const PASSKEY_COLUMNS = `k.id, k.name, ${isoSql('k.created_at')} as created_at, ${isoSql('k.last_used_at')} as last_used_at, k.backed_up`;

const notFound = () => new ApiError('passkey_not_found', 'No passkey with this id belongs to the signed-in user.');

/** The challenge a browser signed, read from its clientDataJSON (never trusted: the library checks it against ours). */
function signedChallenge(credential: unknown): string | null {
  try {
    const data = (credential as { response?: { clientDataJSON?: unknown } })?.response?.clientDataJSON;
    if (typeof data !== 'string' || data.length > 4096) return null;
    const parsed = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

/**
 * Passkeys (WebAuthn, docs/securing-accounts.md): registration for a signed-in user, sign-in
 * with discoverable credentials (no username), sign-up with a passkey alone under the proof
 * rule, list, rename, remove. The relying party is the host of PUBLIC_URL (or
 * `passkey_rp_id`); the accepted origins PUBLIC_URL's and `passkey_origins`. A sign-in whose
 * authenticator verified the user (PIN, biometrics) is `aal2`.
 * @example const passkeys = createPasskeyService(deps, sessions); const options = await passkeys.signInOptions({});
 */
export function createPasskeyService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, accounts, outbox, limits } = deps;
  const rp = createRelyingParty(deps);
  const party = rp.party;

  /** Stores a ceremony's challenge: 5 minutes, single use. */
  async function saveChallenge(
    q: Queryable,
    kind: 'register' | 'signin' | 'signup',
    challenge: string,
    who: { userId?: string; sessionId?: string | null; email?: string | null; payload?: Record<string, unknown> },
  ): Promise<{ id: string; expires_at: number }> {
    const now = clock.now();
    // Ceremonies nobody finished are dropped as new ones start (5 minutes is their whole life).
    await q.query('delete from auth.passkey_challenges where expires_at < $1::timestamptz', [iso(now - CHALLENGE_TTL_MS)]);
    const { rows } = await q.query<{ id: string }>(
      `insert into auth.passkey_challenges (kind, challenge, user_id, session_id, email, payload, created_at, expires_at)
       values ($1, $2, $3, $4, $5, $6::jsonb, $7::timestamptz, $8::timestamptz) returning id`,
      [
        kind,
        challenge,
        who.userId ?? null,
        who.sessionId ?? null,
        who.email ?? null,
        JSON.stringify(who.payload ?? {}),
        iso(now),
        iso(now + CHALLENGE_TTL_MS),
      ],
    );
    return { id: rows[0].id, expires_at: Math.floor((now + CHALLENGE_TTL_MS) / 1000) };
  }

  /** Consumes a live challenge (atomically: of two uses one wins). */
  async function useChallenge(
    q: Queryable,
    where: { id?: string; challenge?: string; userId?: string },
    kind: string,
  ): Promise<{ challenge: string; user_id: string | null; email: string | null; payload: Record<string, unknown> } | null> {
    if (where.id !== undefined && !isUuid(where.id)) return null;
    const { rows } = await q.query<{ challenge: string; user_id: string | null; email: string | null; payload: unknown }>(
      `update auth.passkey_challenges set done_at = $1::timestamptz
       where kind = $2 and done_at is null and expires_at > $1::timestamptz
         and ($3::uuid is null or id = $3::uuid) and ($4::text is null or challenge = $4) and ($5::uuid is null or user_id = $5::uuid)
       returning challenge, user_id, email, payload`,
      [iso(clock.now()), kind, where.id ?? null, where.challenge ?? null, where.userId ?? null],
    );
    const r = rows[0];
    if (!r) return null;
    return { ...r, payload: (r.payload ?? {}) as Record<string, unknown> };
  }

  const verifyNew = rp.verifyRegistration;

  async function insertPasskey(tx: Queryable, userId: string, info: Awaited<ReturnType<typeof verifyNew>>, name: string, now: number) {
    const { rows } = await tx.query<Passkey>(
      `insert into auth.passkeys as k (user_id, credential_id, public_key, counter, transports, name, aaguid, backed_up, created_at)
       values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::timestamptz) on conflict (credential_id) do nothing returning ${PASSKEY_COLUMNS}`,
      [
        userId,
        info.credential.id,
        Buffer.from(info.credential.publicKey).toString('base64url'),
        info.credential.counter,
        JSON.stringify(info.credential.transports ?? []),
        name,
        info.aaguid,
        info.credentialBackedUp,
        iso(now),
      ],
    );
    if (!rows[0]) throw invalid('This passkey is registered already.');
    return rows[0];
  }

  const nameOf = (name: unknown) => (typeof name === 'string' && name.trim() ? name.trim().slice(0, 100) : 'Passkey');

  return {
    /** POST /v1/auth/passkeys/register/options (signed in; aal2 when the user has factors): the creation options. */
    async registerOptions(who: SignedIn) {
      return (await this.startRegistration(who)).options;
    },

    /** The registration ceremony's start: `{challenge_id, options, expires_at}` (epoch seconds; /auth/v1's shape). */
    async startRegistration(who: SignedIn) {
      const { rpID, rpName } = party();
      const { rows: users } = await db.query<{ label: string; name: string | null }>(
        'select coalesce(email, phone, id::text) as label, name from auth.users where id = $1',
        [who.userId],
      );
      const { rows: existing } = await db.query<{ credential_id: string; transports: unknown }>(
        'select credential_id, transports from auth.passkeys where user_id = $1',
        [who.userId],
      );
      if (existing.length >= MAX_PASSKEYS)
        throw new ApiError('too_many_passkeys', `A user may have at most ${MAX_PASSKEYS} passkeys; remove one first.`);
      const options = await (await webauthn()).generateRegistrationOptions({
        rpName,
        rpID,
        userName: users[0]?.label ?? who.userId,
        userDisplayName: users[0]?.name ?? users[0]?.label ?? '',
        userID: uuidBytes(who.userId),
        attestationType: 'none',
        excludeCredentials: existing.map((k) => ({ id: k.credential_id })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      const saved = await saveChallenge(db, 'register', options.challenge, { userId: who.userId, sessionId: who.sessionId });
      return { challenge_id: saved.id, options, expires_at: saved.expires_at };
    },

    /**
     * POST /v1/auth/passkeys/register/verify `{credential, name?, challenge_id?}` → the passkey.
     * The challenge is the one the credential signed (or `challenge_id`), and only the caller's:
     * another user's challenge is unknown here and stays usable by its owner.
     */
    async registerVerify(who: SignedIn, input: { credential?: unknown; name?: unknown; challenge_id?: unknown }): Promise<Passkey> {
      party();
      const byId = input.challenge_id !== undefined && input.challenge_id !== null;
      const signed = byId ? null : signedChallenge(input.credential);
      const used =
        byId && typeof input.challenge_id === 'string'
          ? await useChallenge(db, { id: input.challenge_id, userId: who.userId }, 'register')
          : signed
            ? await useChallenge(db, { challenge: signed, userId: who.userId }, 'register')
            : null;
      if (!used) throw challengeGone('The registration challenge is unknown, expired or used; start again.');
      const info = await verifyNew(input.credential, used.challenge);
      return db.transaction((tx) => insertPasskey(tx, who.userId, info, nameOf(input.name), clock.now()));
    },

    /** GET /v1/auth/passkeys */
    async list(userId: string): Promise<{ passkeys: Passkey[] }> {
      const { rows } = await db.query<Passkey>(
        `select ${PASSKEY_COLUMNS} from auth.passkeys k where k.user_id = $1 order by k.created_at, k.id`,
        [userId],
      );
      return { passkeys: rows };
    },

    /** PATCH /v1/auth/passkeys/{id} `{name}` */
    async rename(userId: string, id: string, name: unknown): Promise<Passkey> {
      if (!isUuid(id)) throw notFound();
      const { rows } = await db.query<Passkey>(
        `update auth.passkeys k set name = $3 where k.id = $1 and k.user_id = $2 returning ${PASSKEY_COLUMNS}`,
        [id, userId, nameOf(name)],
      );
      if (!rows[0]) throw notFound();
      return rows[0];
    },

    /** DELETE /v1/auth/passkeys/{id}: that credential signs no one in any more. */
    async remove(userId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false;
      const { rows } = await db.query('delete from auth.passkeys where id = $1 and user_id = $2 returning id', [id, userId]);
      return rows.length > 0;
    },

    /**
     * POST /v1/auth/passkeys/signin/options `{email?}` → `{challenge_id, options}`. Always
     * username-less (empty `allowCredentials`: the browser offers the passkeys it holds for
     * this site); an `email` only restricts whose passkey may answer, so the answer says nothing
     * about whether the address has an account.
     */
    async signInOptions(input: { email?: unknown }) {
      const { rpID } = party();
      const email = input.email === undefined || input.email === null || input.email === '' ? null : normalizeEmail(input.email);
      const options = await (await webauthn()).generateAuthenticationOptions({ rpID, userVerification: 'preferred', allowCredentials: [] });
      const saved = await saveChallenge(db, 'signin', options.challenge, { email });
      return { challenge_id: saved.id, options, expires_at: saved.expires_at };
    },

    /**
     * POST /v1/auth/passkeys/signin/verify `{challenge_id, credential}` → a session, `aal2`
     * when the authenticator verified the user. The signature counter must grow (a cloned
     * authenticator replays a lower one): checked by the library and again in the UPDATE, so
     * two sign-ins racing with one counter value cannot both pass.
     */
    async signInVerify(input: { challenge_id?: unknown; credential?: unknown }, client: ClientInfo): Promise<Session> {
      party();
      const credential = input.credential;
      if (!isCredential(credential)) throw invalid('credential must be the JSON of the PublicKeyCredential the browser returned.');
      const used = typeof input.challenge_id === 'string' ? await useChallenge(db, { id: input.challenge_id }, 'signin') : null;
      if (!used) throw challengeGone('The sign-in challenge is unknown, expired or used; start again.');
      const { rows } = await db.query<{
        id: string;
        user_id: string;
        public_key: string;
        counter: string;
        transports: unknown;
        email: string | null;
        confirmed: boolean;
      }>(
        `select k.id, k.user_id, k.public_key, k.counter::text as counter, k.transports, u.email, u.email_confirmed_at is not null as confirmed
         from auth.passkeys k join auth.users u on u.id = k.user_id where k.credential_id = $1`,
        [credential.id],
      );
      const key = rows[0];
      if (!key || (used.email !== null && key.email !== used.email)) throw invalid('This passkey is not registered here (or was removed).');
      const info = await rp.verifyAssertion(credential, used.challenge, {
        id: credential.id,
        publicKey: key.public_key,
        counter: Number(key.counter),
        transports: key.transports,
      });
      if (settings.auth().require_email_confirmation && key.email && !key.confirmed)
        throw new ApiError('email_not_confirmed', 'Confirm the email address first: follow the link in the verification email.');
      const now = clock.now();
      const level: Assurance = {
        aal: info.userVerified ? 'aal2' : 'aal1',
        amr: [{ method: 'passkey', timestamp: Math.floor(now / 1000) }],
      };
      return sessions.signInWith(
        client,
        async (tx) => {
          const { rows: moved } = await tx.query<{ user_id: string }>(
            `update auth.passkeys set counter = $2, last_used_at = $3::timestamptz, backed_up = $4
             where id = $1 and ((counter = 0 and $2 = 0) or $2 > counter) returning user_id`,
            [key.id, info.newCounter, iso(now), info.credentialBackedUp],
          );
          return moved[0]?.user_id ?? invalid('The signature counter went back: this passkey may have been cloned.');
        },
        level,
      );
    },

    /**
     * POST /v1/auth/passkeys/signup/options `{email}` → `{challenge_id, options}` for a new
     * account whose only credential is a passkey. Nothing is created until the answer verifies.
     */
    async signUpOptions(input: { email?: unknown; emailRedirectTo?: unknown }) {
      const { rpID, rpName } = party();
      const email = normalizeEmail(input.email);
      const page = allowedRedirect(settings, input.emailRedirectTo, 'emailRedirectTo') ?? null;
      const userId = crypto.randomUUID();
      const options = await (await webauthn()).generateRegistrationOptions({
        rpName,
        rpID,
        userName: email,
        userID: uuidBytes(userId),
        attestationType: 'none',
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      const saved = await saveChallenge(db, 'signup', options.challenge, { email, payload: { user_id: userId, page } });
      return { challenge_id: saved.id, options, expires_at: saved.expires_at };
    },

    /**
     * POST /v1/auth/passkeys/signup/verify `{challenge_id, credential, name?}` → `{user, session}`,
     * like a sign-up with a password: the address stays unproven until its link is used (with
     * `require_email_confirmation`, no session before); a taken address answers as a new one
     * while confirmation is on (no enumeration), and then the passkey joins the unproven account
     * bound to a link of its own: only the passkey whose link proves the address survives it
     * (accounts.proveEmail, as a sign-up's password).
     */
    async signUpVerify(input: { challenge_id?: unknown; credential?: unknown; name?: unknown }, client: ClientInfo) {
      party();
      const used = typeof input.challenge_id === 'string' ? await useChallenge(db, { id: input.challenge_id }, 'signup') : null;
      if (!used?.email) throw challengeGone('The sign-up challenge is unknown, expired or used; start again.');
      const info = await verifyNew(input.credential, used.challenge);
      const email = used.email;
      const s = settings.auth();
      const confirm = s.require_email_confirmation;
      const page = (typeof used.payload.page === 'string' ? used.payload.page : null) ?? s.email_verification_url;
      const planned = String(used.payload.user_id);
      const now = clock.now();
      let queued = false;
      const sendLink = async (tx: Queryable, userId: string, passkeyId: string, delayMs: number) => {
        if (!page) return;
        const { raw, code } = await issueOneTimeTokenWithCode(
          tx,
          {
            kind: 'verification',
            userId,
            email,
            ttlMs: deps.config.verificationTtlMs,
            payload: { passkey_id: passkeyId },
            keepEarlier: true,
          },
          now,
        );
        await queueAuthEmail(outbox, tx, 'verification', email, linkWithToken(page, raw), delayMs ? now + delayMs : undefined, code);
        queued = true;
      };
      const level: Assurance = {
        aal: info.userVerified ? 'aal2' : 'aal1',
        amr: [{ method: 'passkey', timestamp: Math.floor(now / 1000) }],
      };
      const result = await db.transaction(async (tx) => {
        const id = await accounts.createUser(tx, { id: planned, email }, now);
        if (!id) {
          if (!confirm) throw new ApiError('email_exists', 'An account with this email already exists; sign in instead.');
          const existing = await findCredentials(tx, email);
          if (existing && !existing.confirmed && page) {
            const key = await insertPasskey(tx, existing.id, info, nameOf(input.name), now);
            await sendLink(tx, existing.id, key.id, await limits.emailDelay(email));
          }
          return { userId: null, session: null };
        }
        const key = await insertPasskey(tx, id, info, nameOf(input.name), now);
        await accounts.linkEmail(tx, id, email, now);
        if (confirm) {
          await limits.emailDelay(email);
          await sendLink(tx, id, key.id, 0);
          return { userId: id, session: null };
        }
        return { userId: id, session: await deps.sessionState.startSession(tx, id, client, now, level) };
      });
      if (queued) outbox.kick();
      if (!result.userId) return { user: decoyUser(email, iso(now)), session: null };
      const user = (await findUser(db, result.userId)) as User;
      return {
        user,
        session: result.session ? await sessions.issue(user.id, result.session.sessionId, result.session.refreshToken) : null,
      };
    },
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
