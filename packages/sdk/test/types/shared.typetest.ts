/**
 * The SDK declares the wire types itself so its published `.d.ts` depend on nothing; this
 * fails to compile when they drift from `@plinth/shared` (the server's side of the contract).
 */
import type { OAuthProviderId } from '../../../shared/src/providers.js';
import type * as Shared from '../../../shared/src/types.js';
import type { BuiltInOAuthProvider, Identity, OAuthProvider, Session, User } from '../../src/types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
declare function assert<T extends true>(): void;

assert<Same<User, Shared.User>>();
assert<Same<Session, Shared.Session>>();
assert<Same<Identity, Shared.Identity>>();

// The social providers: packages/shared keeps the one list; any other id is an OpenID Connect
// provider of the project's `oidc_providers`.
assert<Same<BuiltInOAuthProvider, OAuthProviderId>>();
assert<Same<OAuthProvider, OAuthProviderId | (string & {})>>();
