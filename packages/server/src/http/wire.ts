/**
 * Response schemas tied to the wire types of packages/shared. Fastify serializes an answer with
 * its route's response schema (fast-json-stringify), which sends only the fields the schema
 * declares: a field added to a shared type and forgotten in its schema would be dropped
 * without a word. `wireSchema<T>()` makes that a compile error.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * The schema, checked by the type checker to describe exactly `T` (no field more, none less,
 * the same types): a mismatch fails to compile, naming both sides.
 * @example export const Bucket = wireSchema<shared.Bucket>()(Type.Object({ id: Type.String(), … }));
 */
export function wireSchema<T>() {
  return <S extends TSchema>(schema: S & (Same<Static<S>, T> extends true ? unknown : { schema: Static<S>; wire: T })): S => schema;
}

/** A timestamp as every answer writes it (lib/clock.ts). */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC, milliseconds (`2026-11-24T21:43:45.978Z`).' });

/** `T` or null. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
