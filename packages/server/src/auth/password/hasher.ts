import { hash, verify } from '@node-rs/argon2';
import { randomToken } from '../../lib/index.js';
import type { Argon2Params } from '../../config/index.js';

/** Hashes and checks passwords. Injected, so tests can count calls (timing equalisation). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a malformed hash; never throws on either. */
  verify(hash: string, password: string): Promise<boolean>;
  /**
   * A real hash of a random secret with the same parameters: sign-in for an unknown email
   * verifies against it so both answers cost one argon2 run.
   */
  dummyHash(): Promise<string>;
}

const ARGON2ID = 2; // Algorithm.Argon2id (a const enum, unusable under isolatedModules)

/**
 * argon2id with the given parameters (OWASP: m=19456 KiB, t=2, p=1).
 * @example const h = createArgon2Hasher(OWASP_ARGON2); await h.verify(await h.hash('pw'), 'pw') // true
 */
export function createArgon2Hasher(params: Argon2Params): PasswordHasher {
  const options = { algorithm: ARGON2ID, memoryCost: params.memoryCost, timeCost: params.timeCost, parallelism: params.parallelism };
  let dummy: Promise<string> | null = null;
  const self: PasswordHasher = {
    hash: (password) => hash(password, options),
    async verify(stored, password) {
      try {
        return await verify(stored, password);
      } catch {
        return false;
      }
    },
    dummyHash() {
      dummy ??= self.hash(randomToken(32));
      return dummy;
    },
  };
  return self;
}
