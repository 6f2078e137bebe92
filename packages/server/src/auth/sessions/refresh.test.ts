import { describe, expect, it } from 'vitest';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { decideRefresh, openSuccessor, type RefreshTokenState, sealSuccessor } from './refresh.js';

const T0 = 1_700_000_000_000;
const policy = { graceMs: 10_000, idleMs: 30 * 24 * 3600 * 1000 };
const fresh: RefreshTokenState = { revoked: false, rotatedAt: null, sessionRevokedAt: null, sessionActiveAt: T0 };

describe('decideRefresh', () => {
  it.each<[string, Partial<RefreshTokenState>, number, ReturnType<typeof decideRefresh>]>([
    ['an unused token rotates', {}, T0 + 1000, { action: 'rotate' }],
    ['a rotated token at its rotation instant returns the active set', { rotatedAt: T0 }, T0, { action: 'return-active' }],
    ['a rotated token 10 s after rotation still returns the active set', { rotatedAt: T0 }, T0 + 10_000, { action: 'return-active' }],
    ['a rotated token 10.001 s after rotation revokes the family', { rotatedAt: T0 }, T0 + 10_001, { action: 'revoke-family' }],
    ['a rotated token a day later revokes the family', { rotatedAt: T0 }, T0 + 86_400_000, { action: 'revoke-family' }],
    ['a revoked token is rejected', { revoked: true }, T0, { action: 'reject', reason: 'revoked' }],
    ['a token of a revoked session is rejected', { sessionRevokedAt: T0 }, T0 + 1, { action: 'reject', reason: 'revoked' }],
    [
      'a revoked, rotated token is rejected, not reused',
      { revoked: true, rotatedAt: T0 },
      T0 + 60_000,
      { action: 'reject', reason: 'revoked' },
    ],
    ['a session idle exactly 30 days still rotates', {}, T0 + policy.idleMs, { action: 'rotate' }],
    ['a session idle 30 days and 1 ms is over', {}, T0 + policy.idleMs + 1, { action: 'reject', reason: 'session_expired' }],
  ])('%s', (_name, patch, now, expected) => {
    expect(decideRefresh({ ...fresh, ...patch }, now, policy)).toEqual(expected);
  });

  it('follows the policy it is given (grace 0: any reuse revokes)', () => {
    expect(decideRefresh({ ...fresh, rotatedAt: T0 }, T0 + 1, { ...policy, graceMs: 0 })).toEqual({ action: 'revoke-family' });
  });
});

describe('sealed successor', () => {
  const parent = randomToken(32);
  const child = randomToken(32);
  const sealed = sealSuccessor(parent, sha256(parent), child);

  it('opens with the parent token', () => {
    expect(openSuccessor(parent, sha256(parent), sealed)).toBe(child);
  });

  it('does not contain the successor or open with the stored hash or another token', () => {
    expect(sealed).not.toContain(child);
    expect(openSuccessor(sha256(parent), sha256(parent), sealed)).toBeNull();
    const other = randomToken(32);
    expect(openSuccessor(other, sha256(parent), sealed)).toBeNull();
    expect(openSuccessor(parent, sha256(other), sealed)).toBeNull(); // bound to its row
  });

  it('refuses a tampered box', () => {
    const buf = Buffer.from(sealed, 'base64url');
    buf[buf.length - 1] ^= 1;
    expect(openSuccessor(parent, sha256(parent), buf.toString('base64url'))).toBeNull();
    expect(openSuccessor(parent, sha256(parent), 'garbage')).toBeNull();
  });
});
