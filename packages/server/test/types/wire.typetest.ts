/**
 * Compile-time tests (`tsc -p packages/server/test/tsconfig.json`): the server's response
 * schemas describe packages/shared's wire types exactly. Each `@ts-expect-error` line must fail
 * to compile; if `wireSchema` stopped catching it, tsc reports the directive as unused.
 */
import type * as Wire from '@plinth/shared';
import { type Static, Type } from '@sinclair/typebox';
import type { AUTH_DOCS } from '../../src/auth/index.js';
import { Nullable, Timestamp, wireSchema } from '../../src/http/index.js';
import type * as S from '../../src/storage/schemas.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
declare function assert<T extends true>(): void;

// What the routes send is the shared declaration, field for field.
assert<Same<Static<(typeof AUTH_DOCS.getUser.response)[200]>, Wire.User>>();
assert<Same<Static<(typeof AUTH_DOCS.signIn.response)[200]>, Wire.Session>>();
assert<Same<Static<typeof S.Bucket>, Wire.Bucket>>();
assert<Same<Static<typeof S.ObjectInfo>, Wire.StorageObject>>();
assert<Same<Static<typeof S.Uploaded>, Wire.UploadedObject>>();
assert<Same<Static<typeof S.ListEntry>, Wire.ListEntry>>();

const identity = wireSchema<Wire.Identity>();
const fields = { provider: Type.String(), email: Nullable(Type.String()), created_at: Timestamp };
const { created_at: _, ...withoutTime } = fields;

export const checks = [
  identity(Type.Object(fields)),
  // @ts-expect-error a field of the wire type is missing from the schema (it would never be sent)
  identity(Type.Object(withoutTime)),
  // @ts-expect-error a field the wire type does not have
  identity(Type.Object({ ...fields, extra: Type.String() })),
  // @ts-expect-error a field of another type (the schema does not allow null)
  identity(Type.Object({ ...fields, email: Type.String() })),
];
