/**
 * The SDK's wire types are `@plinth/shared`'s own declarations (the server answers with them),
 * re-exported; its build copies their `.d.ts` so the package depends on nothing
 * (scripts/sdk-types.mjs). This fails to compile if the SDK ever declares a copy that drifts,
 * and checks that `PlinthError.code` knows every code of the server's, and no misspelling.
 */
import type { ErrorCode, OAuthProviderId } from '../../../shared/src/index.js';
import type * as Shared from '../../../shared/src/index.js';
import type {
  BuiltInOAuthProvider,
  Bucket,
  Identity,
  ListEntry,
  OAuthProvider,
  PlinthError,
  Session,
  StorageObject,
  UploadedObject,
  User,
} from '../../src/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
declare function assert<T extends true>(): void;

assert<Same<User, Shared.User>>();
assert<Same<Session, Shared.Session>>();
assert<Same<Identity, Shared.Identity>>();
assert<Same<Bucket, Shared.Bucket>>();
assert<Same<StorageObject, Shared.StorageObject>>();
assert<Same<UploadedObject, Shared.UploadedObject>>();
assert<Same<ListEntry, Shared.ListEntry>>();
// The social providers: packages/shared keeps the one list; any other id is an OpenID Connect
// provider of the project's `oidc_providers`.
assert<Same<BuiltInOAuthProvider, OAuthProviderId>>();
assert<Same<OAuthProvider, OAuthProviderId | (string & {})>>();

// Every code the server sends is a code an SDK error may carry…
assert<ErrorCode extends PlinthError['code'] ? true : false>();
export function branch(error: PlinthError): string {
  if (error.code === 'email_exists' || error.code === 'network_error') return error.message;
  // @ts-expect-error …and a misspelt one is refused
  if (error.code === 'email_exist') return '';
  return error.code;
}
