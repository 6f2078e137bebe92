const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a value is a UUID in its usual text form: checked before it is bound as `$n::uuid`,
 * where anything else would be a database error (a token's `sub`, a path's `{id}`).
 * @example isUuid('0b7f4c5e-3c1a-4d2b-9e8f-1a2b3c4d5e6f') // true
 */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
