/**
 * Accounts: every write to users, passwords, identities and sessions-on-proof lives here, so
 * each rule has one home (docs/architecture.md, "One home for each rule"). What this module adds:
 * - the proof rule: the first proof of an address drops every credential attached while it
 *   was unproven, except the one the proof was issued for (`proveEmail`);
 * - one place that opens sessions (a ban is checked there for every method) and one that
 *   ends them (the REST API's session gate hears of it at once);
 * - the reads the methods share (`findUser`, `findCredentials`, `decoyUser`).
 */
import type { SessionGate } from '../sessions/gate.js';
import { createSessionWrites } from './sessions.js';
import { type AccountWrites, createAccountWrites } from './writes.js';

export { banned, type Started, type Which } from './sessions.js';
export type { IdentityInput, NewUser, ProofKeeps, ProofOutcome } from './writes.js';
export { type Credentials, decoyUser, findCredentials, findUser, USER_COLUMNS } from './repo.js';

export type Accounts = AccountWrites;

/**
 * @example const accounts = createAccounts(gate); await db.transaction((tx) => accounts.startSession(tx, id, client, clock.now()));
 */
export function createAccounts(gate: SessionGate): Accounts {
  return createAccountWrites(createSessionWrites(gate));
}
