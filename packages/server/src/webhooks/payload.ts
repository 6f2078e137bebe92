/**
 * The body of a delivery (docs/webhooks.md "The request"): `{type, table, seq, record,
 * old_record, commit_time}`, written around the row images as PostgreSQL rendered them (no
 * parse, no re-encoding). A body over 256 KiB carries the primary key in place of each row and
 * `"truncated": true`: a receiver reads the row through the REST API, and no endpoint is sent
 * megabytes per change.
 */
import { pickFields, splitFields } from './row.js';

/** Bodies above this many bytes carry the primary key only. */
export const MAX_BODY_BYTES = 256 * 1024;

export interface ChangeImage {
  seq: number;
  table: string;
  op: 'insert' | 'update' | 'delete';
  /** JSON text of the row as written (null for a delete). */
  row: string | null;
  /** JSON text of the row before (null for an insert). */
  old: string | null;
  /** RFC 3339, UTC, microseconds. */
  writtenAt: string;
}

/**
 * The body's text, and whether the rows were left out for its size (`pk`: the table's primary
 * key columns, known from the schema cache).
 * @example buildBody({ seq: 7, table: 'orders', op: 'insert', row: '{"id": 1}', old: null, writtenAt: '…' }, ['id'])
 *   // { body: '{"type":"insert","table":"orders","seq":7,"record":{"id": 1},"old_record":null,"commit_time":"…"}', truncated: false }
 */
export function buildBody(c: ChangeImage, pk: string[]): { body: string; truncated: boolean } {
  const head = `{"type":"${c.op}","table":${JSON.stringify(c.table)},"seq":${c.seq},"record":`;
  const tail = `,"commit_time":"${c.writtenAt}"`;
  const body = `${head}${c.row ?? 'null'},"old_record":${c.old ?? 'null'}${tail}}`;
  if (Buffer.byteLength(body) <= MAX_BODY_BYTES) return { body, truncated: false };
  const keyOf = (text: string | null) => {
    if (text === null) return 'null';
    const fields = splitFields(text);
    return fields ? pickFields(fields, pk) : '{}';
  };
  return { body: `${head}${keyOf(c.row)},"old_record":${keyOf(c.old)}${tail},"truncated":true}`, truncated: true };
}
