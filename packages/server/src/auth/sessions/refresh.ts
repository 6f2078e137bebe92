import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What the database says about a presented refresh token and its session (times in epoch ms). */
export interface RefreshTokenState {
  revoked: boolean;
  rotatedAt: number | null;
  sessionRevokedAt: number | null;
  /** When the session was created or last refreshed. */
  sessionActiveAt: number;
}

export interface RefreshPolicy {
  /** A rotated token still yields the current set for this long (two tabs refreshing at once). */
  graceMs: number;
  /** A session unused for this long is over. */
  idleMs: number;
}

export type RefreshDecision =
  | { action: 'rotate' }
  | { action: 'return-active' }
  | { action: 'revoke-family' }
  | { action: 'reject'; reason: 'revoked' | 'session_expired' };

/**
 * The refresh rule of docs/api.md §5.2 as a pure function of the stored state and the time.
 * @example decideRefresh({ revoked: false, rotatedAt: null, sessionRevokedAt: null, sessionActiveAt: t0 }, t0 + 1000, policy) // { action: 'rotate' }
 * @example decideRefresh({ ...s, rotatedAt: t0 }, t0 + 11_000, { graceMs: 10_000, idleMs }) // { action: 'revoke-family' }
 */
export function decideRefresh(token: RefreshTokenState, now: number, policy: RefreshPolicy): RefreshDecision {
  if (token.revoked || token.sessionRevokedAt !== null) return { action: 'reject', reason: 'revoked' };
  if (now - token.sessionActiveAt > policy.idleMs) return { action: 'reject', reason: 'session_expired' };
  if (token.rotatedAt === null) return { action: 'rotate' };
  // Inside the window a second tab gets the set the first tab got; after it, a rotated token
  // showing up means it was copied: end the session, newest token included.
  if (now - token.rotatedAt <= policy.graceMs) return { action: 'return-active' };
  return { action: 'revoke-family' };
}

// The successor of a rotated token is kept encrypted under a key derived from the PARENT's
// raw value. The database holds only SHA-256(parent), from which the key cannot be derived,
// so the row is useless without the parent token — and whoever has the parent token is the
// one the grace window is for. No server-side key to manage; works across instances.
const INFO = 'plinth refresh successor v1';

function keyOf(parentRaw: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(parentRaw, 'utf8'), Buffer.alloc(0), INFO, 32));
}

/**
 * Encrypts the successor token for the grace window (AES-256-GCM, bound to the parent's hash).
 * @example const sealed = sealSuccessor(parentRaw, parentHash, childRaw); openSuccessor(parentRaw, parentHash, sealed) // childRaw
 */
export function sealSuccessor(parentRaw: string, parentHash: string, childRaw: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(parentRaw), iv);
  cipher.setAAD(Buffer.from(parentHash));
  const body = Buffer.concat([cipher.update(childRaw, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The successor's raw value, or null when the box does not open with this parent. */
export function openSuccessor(parentRaw: string, parentHash: string, sealed: string): string | null {
  try {
    const buf = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(parentRaw), buf.subarray(0, 12));
    decipher.setAAD(Buffer.from(parentHash));
    decipher.setAuthTag(buf.subarray(12, 28));
    return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
