/**
 * @plinth/sdk: the client of a Plinth project. Web APIs only (fetch, storage, locks); no
 * runtime dependencies. See README.md for every method.
 */
export { createClient, type AuthOptions, type ClientOptions, type PlinthClient, type RealtimeApi } from './client.js';
export type {
  RealtimeChange,
  RealtimeEvent,
  RealtimeOp,
  RealtimeOptions,
  RealtimeStatus,
  RealtimeStatusCallback,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
  WebSocketLike,
} from './realtime/types.js';
export type { ChannelOptions, PresenceState, RealtimeChannel } from './realtime/channel.js';
export { AuthClient } from './auth/auth-client.js';
export type { SignInData } from './auth/context.js';
export type { AuthStateCallback, AuthSubscription } from './auth/events.js';
export type { MagicLinkOptions } from './auth/magic-link.js';
export type { SignInWithOAuthOptions } from './auth/oauth.js';
export type { SignUpCredentials, SignUpData } from './auth/password.js';
export type { UserAttributes } from './auth/user.js';
export { type AssuranceLevel, MfaApi } from './auth/mfa.js';
export { PasskeysApi } from './auth/passkeys.js';
export { parseOAuthFragment, type OAuthFragment } from './auth/fragment.js';
export { memoryStorage } from './auth/storage.js';
// The one request function every SDK call goes through, for management tools (the console).
export { send, normalizeUrl, type HttpConfig, type HttpRequest, type HttpResponse } from './fetch.js';
export { FilterBuilder, RestRequest, type FilterOperator, type ReferencedTable } from './rest/builder.js';
export { QueryBuilder, type UpsertOptions, WriteRequest } from './rest/query-builder.js';
export { FunctionsClient, type InvokeOptions, type InvokeResult } from './functions.js';
export { RpcBuilder, type RpcOptions } from './rest/rpc.js';
export type { RpcCall } from './client.js';
export type { CheckSelectOf, FilterColumns, JsonValue, SelectErrors, SelectResult } from './rest/select.js';
export { encodePath, StorageBucket, StorageClient } from './storage/index.js';
export type {
  Bucket,
  BucketOptions,
  ListEntry,
  ListOptions,
  StorageObject,
  UploadBody,
  UploadedObject,
  UploadOptions,
  UrlOptions,
} from './storage/index.js';
export type {
  CheckSelect,
  ColumnName,
  FunctionDef,
  FunctionName,
  FunctionResult,
  GenericDatabase,
  GenericFunction,
  GenericRelationship,
  GenericSchema,
  GenericTable,
  GenericView,
  OrderOptions,
  RestResult,
  SelectRow,
  TableDef,
  TableDefOf,
  TableName,
  UntypedDatabase,
  WriteOptions,
} from './rest/types.js';
export type {
  AuthChangeEvent,
  AuthenticatorAssuranceLevel,
  AuthMethodReference,
  EnrolledFactor,
  Factor,
  Passkey,
  Identity,
  LockFunction,
  BuiltInOAuthProvider,
  OAuthProvider,
  PlinthError,
  Result,
  Session,
  SupportedStorage,
  User,
  WebhookPayload,
} from './types.js';
