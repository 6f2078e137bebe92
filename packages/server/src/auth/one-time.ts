import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { iso, randomToken, sha256 } from '../lib/index.js';
import { normalizeEmail } from './validate.js';

export type OneTimeKind = 'verification' | 'reset' | 'magic_link' | 'email_change';

export interface IssueInput {
  kind: OneTimeKind;
  userId: string | null;
  email: string;
  ttlMs: number;
  payload?: Record<string, string>;
  /**
   * Keep the user's earlier unused tokens of this kind. A sign-up's verification link carries
   * that sign-up's password: a later sign-up of the same address must not void it.
   */
  keepEarlier?: boolean;
}

/**
 * Makes a one-time token (32 random bytes; only its SHA-256 is stored) and voids the
 * user's earlier unused tokens of the same kind: a fresh link replaces the old one.
 * Returns the raw token, which goes into the emailed link and nowhere else.
 * @example const raw = await issueOneTimeToken(tx, { kind: 'reset', userId, email, ttlMs: 3600_000 }, clock.now());
 */
export async function issueOneTimeToken(tx: Queryable, input: IssueInput, now: number): Promise<string> {
  return (await issueOneTimeTokenWithCode(tx, input, now)).raw;
}

/** A wrong code voids the code (not the link) of a token after this many, counted on every live token of the address. */
export const CODE_MAX_ATTEMPTS = 5;
const CODE = /^\d{6}$/;
const codeHash = (tokenHash: string, code: string) => sha256(`${tokenHash}:${code}`);

/**
 * issueOneTimeToken, and the token's 6-digit code (mailed beside the link: the same token, the
 * same lifetime, used once), which only a salted hash keeps.
 * @example const { raw, code } = await issueOneTimeTokenWithCode(tx, { kind: 'magic_link', userId, email, ttlMs }, now);
 */
export async function issueOneTimeTokenWithCode(tx: Queryable, input: IssueInput, now: number): Promise<{ raw: string; code: string }> {
  const raw = randomToken(32);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  if (input.keepEarlier) {
    // nothing voided
  } else if (input.userId) {
    await tx.query('delete from auth.one_time_tokens where user_id = $1 and kind = $2 and consumed_at is null', [input.userId, input.kind]);
  } else {
    await tx.query('delete from auth.one_time_tokens where user_id is null and email = $1 and kind = $2 and consumed_at is null', [
      input.email,
      input.kind,
    ]);
  }
  const hash = sha256(raw);
  await tx.query(
    `insert into auth.one_time_tokens (hash, user_id, email, kind, payload, created_at, expires_at, code_hash)
     values ($1, $2, $3, $4, $5::jsonb, $6::timestamptz, $7::timestamptz, $8)`,
    [
      hash,
      input.userId,
      input.email,
      input.kind,
      JSON.stringify(input.payload ?? {}),
      iso(now),
      iso(now + input.ttlMs),
      codeHash(hash, code),
    ],
  );
  return { raw, code };
}

/**
 * A mailed 6-digit code and the address it was mailed to, in place of a link's token wherever
 * one is consumed (consumeOneTimeToken). A class, so a JSON body's object is never taken for one.
 */
export class EmailCode {
  constructor(
    readonly email: string,
    readonly code: string,
  ) {}
}

/**
 * What a body names a mailed token by: its link's `token`, or the `email` and 6-digit `code`
 * mailed with it (`/v1/auth`'s verify-email, signin-magic-link, reset-password).
 * @example await magic.signIn({ token: tokenOrCode(req.body) }, client);
 */
export function tokenOrCode(body: { token?: unknown; email?: unknown; code?: unknown }): unknown {
  if (body.code === undefined) return body.token;
  if (typeof body.code !== 'string' || body.email === undefined)
    throw new ApiError('invalid_request', 'Send the token of the link, or the email address and the 6-digit code mailed with it.');
  return new EmailCode(normalizeEmail(body.email), body.code);
}

/**
 * The hash of the live token of `kinds` mailed to this address whose code this is, or null;
 * a miss counts a wrong attempt on each live token of the address and kinds (committed with
 * the caller's transaction: the services answer a refusal after committing).
 */
async function tokenOfCode(tx: Queryable, c: EmailCode, kinds: OneTimeKind[], now: number): Promise<string | null> {
  const { rows } = await tx.query<{ hash: string; code_hash: string }>(
    `select hash, code_hash from auth.one_time_tokens where email = $1 and kind = any($2::text[]) and consumed_at is null
     and expires_at > $3::timestamptz and code_hash is not null and code_attempts < $4 order by created_at desc limit 20 for update`,
    [c.email, kinds, iso(now), CODE_MAX_ATTEMPTS],
  );
  if (!rows.length) return null;
  const given = CODE.test(c.code) ? c.code : null;
  const hit = given
    ? rows.find((r) => {
        const a = Buffer.from(codeHash(r.hash, given));
        const b = Buffer.from(r.code_hash);
        return a.length === b.length && timingSafeEqual(a, b);
      })
    : undefined;
  if (hit) return hit.hash;
  await tx.query('update auth.one_time_tokens set code_attempts = code_attempts + 1 where hash = any($1::text[])', [
    rows.map((r) => r.hash),
  ]);
  return null;
}

export interface ConsumedToken {
  kind: OneTimeKind;
  userId: string | null;
  email: string | null;
  payload: Record<string, string>;
}

/**
 * Uses a token once (its raw token, or an EmailCode: the code mailed with it): one conditional UPDATE, so of two concurrent uses exactly one gets the
 * row (the other waits on the row lock, then finds `consumed_at` set). Null when the token
 * is unknown, used, expired or of another kind.
 * @example const t = await consumeOneTimeToken(tx, raw, ['verification', 'email_change'], clock.now());
 */
export async function consumeOneTimeToken(tx: Queryable, raw: unknown, kinds: OneTimeKind[], now: number): Promise<ConsumedToken | null> {
  let hash: string | null;
  if (raw instanceof EmailCode) hash = await tokenOfCode(tx, raw, kinds, now);
  else hash = typeof raw !== 'string' || raw.length < 16 || raw.length > 256 ? null : sha256(raw);
  if (!hash) return null;
  const { rows } = await tx.query<{ kind: OneTimeKind; user_id: string | null; email: string | null; payload: unknown }>(
    `update auth.one_time_tokens set consumed_at = $2::timestamptz
     where hash = $1 and consumed_at is null and expires_at > $2::timestamptz and kind = any($3::text[])
     returning kind, user_id, email, payload`,
    [hash, iso(now), kinds],
  );
  const row = rows[0];
  if (!row) return null;
  return { kind: row.kind, userId: row.user_id, email: row.email, payload: (row.payload as Record<string, string> | null) ?? {} };
}

/**
 * The credential bound to a user's pending sign-up links (a password hash, or a passkey of a
 * passkey sign-up), when they all carry the same one (one sign-up, maybe resent); nulls when
 * none does or when several sign-ups chose different ones. A resent link carries it; with
 * several candidates no credential survives the proof (the one who proves the address then
 * sets a password by reset or signs in by link).
 * @example const { hash, passkey } = await pendingSignup(tx, userId, clock.now());
 */
export async function pendingSignup(tx: Queryable, userId: string, now: number): Promise<{ hash: string | null; passkey: string | null }> {
  const { rows } = await tx.query<{ hash: string | null; passkey: string | null }>(
    `select distinct payload ->> 'password_hash' as hash, payload ->> 'passkey_id' as passkey from auth.one_time_tokens
     where user_id = $1 and kind = 'verification' and consumed_at is null and expires_at > $2::timestamptz`,
    [userId, iso(now)],
  );
  return rows.length === 1
    ? { hash: rows[0].hash ?? null, passkey: rows[0].hash ? null : (rows[0].passkey ?? null) }
    : { hash: null, passkey: null };
}

/** A PKCE challenge a link is bound to (RFC 7636): `S256` (or `plain`) and the challenge. */
export interface PkceChallenge {
  challenge: string;
  method: 's256' | 'plain';
}

const PKCE_TEXT = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * A client's `code_challenge` and `code_challenge_method` checked (RFC 7636's alphabet and
 * lengths; `s256` or `plain`), or 400 `invalid_request`; undefined when none was sent.
 * @example const pkce = pkceChallenge(body.code_challenge, body.code_challenge_method);
 */
export function pkceChallenge(challenge: unknown, method: unknown): PkceChallenge | undefined {
  if (challenge === undefined || challenge === null || challenge === '') return undefined;
  const m = typeof method === 'string' ? method.toLowerCase() : 's256';
  if (typeof challenge !== 'string' || !PKCE_TEXT.test(challenge) || (m !== 's256' && m !== 'plain')) {
    throw new ApiError(
      'invalid_request',
      'code_challenge must be 43 to 128 characters of RFC 7636, with code_challenge_method s256 or plain.',
    );
  }
  return { challenge, method: m };
}

/** What a link's payload keeps of its PKCE challenge. */
export function pkcePayload(pkce: PkceChallenge | undefined): Record<string, string> {
  return pkce ? { code_challenge: pkce.challenge, code_challenge_method: pkce.method } : {};
}

/**
 * Whether a link used with a PKCE verifier must be refused: a verifier was given and the link
 * was issued with no challenge, or the verifier does not match it. Without a verifier nothing is
 * checked here (the link itself is the proof, as a link without PKCE).
 * @example if (pkceRefused(used.payload, input.codeVerifier)) return invalid;
 */
export function pkceRefused(payload: Record<string, string>, verifier: unknown): boolean {
  if (verifier === undefined) return false;
  const challenge = payload.code_challenge;
  if (typeof verifier !== 'string' || !challenge || !PKCE_TEXT.test(verifier)) return true;
  const computed = payload.code_challenge_method === 'plain' ? verifier : createHash('sha256').update(verifier).digest('base64url');
  const a = Buffer.from(computed);
  const b = Buffer.from(challenge);
  return a.length !== b.length || !timingSafeEqual(a, b);
}
