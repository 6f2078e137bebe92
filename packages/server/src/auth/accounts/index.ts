/**
 * Accounts: every write to users, passwords and identities lives here, so each rule has one
 * home (docs/architecture.md, "One home for each rule"). What this module adds:
 * - the proof rule: the first proof of an address drops every credential attached while it
 *   was unproven, except the one the proof was issued for (`proveEmail`);
 * - the reads the methods share (`findUser`, `findCredentials`, `decoyUser`).
 * Sessions are opened and ended by the session state (sessions/state.ts), which this module
 * uses (a proof ends sessions) and which never uses it.
 */
import type { AuthHooks } from '../hooks.js';
import type { SessionState } from '../sessions/state.js';
import { type AccountWrites, createAccountWrites } from './writes.js';

export type { IdentityInput, NewUser, ProofKeeps, ProofOutcome } from './writes.js';
export {
  type Credentials,
  decoyUser,
  findCredentials,
  findUser,
  findUserClaims,
  USER_COLUMNS,
} from './repo.js';

export type Accounts = AccountWrites;

/**
 * @example const accounts = createAccounts(createSessionState(gate)); await db.transaction((tx) => accounts.proveEmail(tx, id, email, {}, clock.now()));
 */
export function createAccounts(sessions: SessionState, hooks?: Pick<AuthHooks, 'beforeUserCreated'>): Accounts {
  return createAccountWrites(sessions, hooks);
}
