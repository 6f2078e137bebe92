import { hash, verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import { randomToken } from '../../lib/index.js';
import type { Argon2Params } from '../../config/index.js';

/** Hashes and checks passwords. Injected, so tests can count calls (timing equalisation). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * False for a wrong password and for a malformed hash; never throws on either. An imported
   * bcrypt hash is checked with bcrypt (isImportedHash).
   */
  verify(hash: string, password: string): Promise<boolean>;
  /**
   * A real hash of a random secret with the same parameters: sign-in for an unknown email
   * verifies against it so both answers cost one argon2 run.
   */
  dummyHash(): Promise<string>;
}

const ARGON2ID = 2; // Algorithm.Argon2id (a const enum, unusable under isolatedModules)

/** A bcrypt hash (`$2a$`, `$2b$`, `$2y$`): Supabase's `encrypted_password` and most systems' (issue 35). */
const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
/**
 * The highest bcrypt cost taken from an imported hash: each step doubles the work (cost 14 is
 * about a second here); a higher one would let an imported row hold a sign-in for minutes.
 */
export const MAX_BCRYPT_COST = 14;

/**
 * Whether a stored hash was imported (bcrypt) rather than made here (argon2id): it is checked
 * with bcrypt, and replaced by an argon2id hash at its first good sign-in.
 * @example isImportedHash('$2a$10$…') // true
 */
export function isImportedHash(stored: string): boolean {
  return BCRYPT.test(stored);
}

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
        const imported = BCRYPT.exec(stored);
        if (imported) return Number(imported[1]) <= MAX_BCRYPT_COST && (await bcrypt.compare(password, stored));
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
