import type { OidcTestClaim, OidcTestResult } from '@plinth/shared';
import type { Db } from '../../db/index.js';
import { iso, randomToken } from '../../lib/index.js';
import { profileOf, type ReceivedClaims } from './providers/oidc.js';

/** A test's result is kept this long: long enough to read, short for claims about a real person. */
const TEST_TTL_MS = 60 * 60 * 1000;
/** The claims a sign-in needs: named when missing. */
const NEEDED = ['sub', 'email', 'email_verified'] as const;
const MAX_CLAIMS = 200;

/**
 * What a test sign-in shows the admin: every claim with its source (ID token first, then
 * userinfo), the needed ones that neither sent, and the profile a sign-in would use.
 * @example testOutcome('https://sso.example.com', { idToken: { sub: 'a' }, userinfo: null, merged: { sub: 'a' } }).missing // ['email', 'email_verified']
 */
export function testOutcome(issuer: string, received: ReceivedClaims): Pick<OidcTestResult, 'claims' | 'missing' | 'profile'> {
  const claims: OidcTestClaim[] = [
    ...Object.entries(received.idToken).map(([name, value]) => ({ name, value, source: 'id_token' as const })),
    ...Object.entries(received.userinfo ?? {}).map(([name, value]) => ({ name, value, source: 'userinfo' as const })),
  ].slice(0, MAX_CLAIMS);
  const missing = NEEDED.filter(
    (name) => received.merged[name] === undefined || received.merged[name] === null || received.merged[name] === '',
  );
  const p = profileOf(issuer, received.merged);
  return {
    claims,
    missing,
    profile: { subject: String(received.merged.sub), email: p.email, email_verified: p.emailVerified, name: p.name, avatar: p.avatar },
  };
}

interface Row {
  id: string;
  provider: string;
  issuer: string;
  status: OidcTestResult['status'];
  result: Partial<OidcTestResult> | null;
  created_at: string;
  completed_at: string | null;
}

const utc = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The test sign-ins of `auth.oidc_tests` (migration 0090): made pending when one starts, given
 * their outcome by the callback, read by the console; an hour later they are gone.
 * @example const tests = testSignins(db); const id = await tests.create('corp', issuer, clock.now());
 */
export function testSignins(db: Db) {
  return {
    async create(provider: string, issuer: string, now: number): Promise<string> {
      const id = randomToken(16);
      await db.query(
        `with gone as (delete from auth.oidc_tests where expires_at < $5::timestamptz)
         insert into auth.oidc_tests (id, provider, issuer, created_at, expires_at) values ($1, $2, $3, $5::timestamptz, $4::timestamptz)`,
        [id, provider, issuer, iso(now + TEST_TTL_MS), iso(now)],
      );
      return id;
    },
    /** Records a test's outcome, once (a pending test only). */
    async finish(id: string, status: 'done' | 'failed', result: Partial<OidcTestResult>, now: number): Promise<void> {
      await db.query(
        `update auth.oidc_tests set status = $2, result = $3::jsonb, completed_at = $4::timestamptz where id = $1 and status = 'pending'`,
        [id, status, JSON.stringify(result), iso(now)],
      );
    },
    async read(provider: string, id: string, now: number): Promise<OidcTestResult | null> {
      const { rows } = await db.query<Row>(
        `select id, provider, issuer, status, result, ${utc('created_at')} as created_at, ${utc('completed_at')} as completed_at from auth.oidc_tests
         where id = $1 and provider = $2 and expires_at > $3::timestamptz`,
        [id, provider, iso(now)],
      );
      const row = rows[0];
      if (!row) return null;
      const result = row.result ?? {};
      return {
        id: row.id,
        provider: row.provider,
        status: row.status,
        issuer: row.issuer,
        created_at: row.created_at,
        completed_at: row.completed_at,
        claims: result.claims ?? [],
        missing: result.missing ?? [],
        profile: result.profile ?? null,
        error: result.error ?? null,
      };
    },
  };
}

export type TestSignins = ReturnType<typeof testSignins>;
