import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../../test/db.js';
import { type Db, migrateSystem } from '../../db/index.js';
import { ApiError } from '../../http/errors.js';
import { fakeClock } from '../../lib/clock.js';
import { createTokenService } from './jwt.js';

let db: Db;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await migrateSystem(db);
});
afterAll(() => cleanup());

const ISSUER = 'http://localhost:8080/v1/auth';

async function foreignToken(kid: string, now: number) {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT({ role: 'authenticated' })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISSUER)
    .setAudience('authenticated')
    .setSubject(crypto.randomUUID())
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + 3600)
    .sign(privateKey);
}

describe('token service', () => {
  it('tokens with unknown kids are refused without a database read each: keys are re-read at most every 30 s', async () => {
    const clock = fakeClock(Date.now());
    // The real database, with reads of the keys counted.
    let reads = 0;
    const counted: Db = { ...db, transaction: (fn) => (reads++, db.transaction(fn)) };
    const tokens = await createTokenService(counted, ISSUER, clock);
    const atStart = reads;
    for (let i = 0; i < 20; i++) {
      const err = await tokens.verify(await foreignToken(`ghost-${i}`, clock.now())).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err.code).toBe('invalid_token');
    }
    expect(reads - atStart).toBe(1);
    clock.advance(30_000);
    await tokens.verify(await foreignToken('ghost-late', clock.now())).catch(() => undefined);
    expect(reads - atStart).toBe(2);
  });
});
