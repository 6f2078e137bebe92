/**
 * Cell values of the table browser: how a value reads in a cell, how it reads in an editor, and
 * how edited text goes back to the REST API. Text is sent as typed for scalar columns
 * (PostgreSQL casts it, and refuses with `invalid_value` what does not fit); JSON and array
 * columns take JSON. No DOM.
 */

/** Columns whose values are JSON documents or arrays (edited as JSON). */
export function isJsonType(pgType: string): boolean {
  return pgType === 'json' || pgType === 'jsonb' || pgType.endsWith('[]');
}

/** A value in a cell, on one line: JSON compact, null as NULL. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A value in an editor: JSON documents pretty-printed; a JSON column's string as its JSON. */
export function editText(v: unknown, pgType: string): string {
  if (v === null || v === undefined) return '';
  if (isJsonType(pgType)) return JSON.stringify(v, null, 2);
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * Edited text as the value to send, or why it cannot be.
 * @example parseEdit('{"a": 1}', 'jsonb') // { value: { a: 1 } }
 * @example parseEdit('42', 'int8') // { value: '42' } (the server casts)
 */
export function parseEdit(text: string, pgType: string): { value: unknown } | { error: string } {
  if (!isJsonType(pgType)) return { value: text };
  try {
    const value = JSON.parse(text) as unknown;
    if (pgType.endsWith('[]') && !Array.isArray(value) && value !== null)
      return { error: 'An array column takes a JSON array, e.g. ["a", "b"].' };
    return { value };
  } catch (err) {
    return { error: `Not valid JSON: ${(err as Error).message}` };
  }
}
