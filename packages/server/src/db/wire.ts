/**
 * The few messages of PostgreSQL's wire protocol (version 3, "Frontend/Backend Protocol" in
 * PostgreSQL's documentation) that `Db.runAs` sends and reads itself, on PostgreSQL
 * (db/wire-pool.ts) and on PGlite (its `execProtocolRaw`). No I/O here.
 *
 * Why not the driver's: postgres.js ends every query with its own Sync, so role, claims,
 * statement and role check cost three round trips and an explicit BEGIN/COMMIT (docs/architecture.md
 * "The database layer" has the figures); here they are one batch of Bind/Execute messages
 * and one Sync, which PostgreSQL runs as one implicit transaction.
 */

/** Text format for every value, both ways. */
const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** A frontend message: type byte, int32 length (itself included), body. */
function message(type: string, bodyLength: number): { buf: Buffer; at: number } {
  const buf = Buffer.allocUnsafe(5 + bodyLength);
  buf[0] = type.charCodeAt(0);
  buf.writeInt32BE(4 + bodyLength, 1);
  return { buf, at: 5 };
}

function cstring(buf: Buffer, at: number, s: string): number {
  const n = buf.write(s, at, 'utf8');
  buf[at + n] = 0;
  return at + n + 1;
}

/**
 * Parse: prepares `text` under `name` with the given parameter type oids.
 * @example parse('s1', 'select $1::int', [25])
 */
export function parse(name: string, text: string, types: number[]): Buffer {
  const { buf, at } = message('P', utf8(name) + 1 + utf8(text) + 1 + 2 + 4 * types.length);
  let i = cstring(buf, cstring(buf, at, name), text);
  i = buf.writeInt16BE(types.length, i);
  for (const t of types) i = buf.writeInt32BE(t, i);
  return buf;
}

/**
 * Bind: the unnamed portal over statement `name`, every value and result in text format.
 * @example bind('s1', ['42', null])
 */
export function bind(name: string, values: Array<string | null>): Buffer {
  let size = 1 + utf8(name) + 1 + 2 + 2 + 2;
  const lengths = values.map((v) => (v === null ? -1 : utf8(v)));
  for (const n of lengths) size += 4 + Math.max(n, 0);
  const { buf, at } = message('B', size);
  buf[at] = 0; // unnamed portal
  let i = cstring(buf, at + 1, name);
  i = buf.writeInt16BE(0, i); // no parameter format codes: all text
  i = buf.writeInt16BE(values.length, i);
  for (let k = 0; k < values.length; k++) {
    i = buf.writeInt32BE(lengths[k], i);
    if (lengths[k] > 0) i += buf.write(values[k] as string, i, 'utf8');
  }
  buf.writeInt16BE(0, i); // no result format codes: all text
  return buf;
}

/**
 * Close of a prepared statement; closing one that does not exist is not an error.
 * @example closeStatement('s1')
 */
export function closeStatement(name: string): Buffer {
  const { buf, at } = message('C', 1 + utf8(name) + 1);
  buf[at] = 'S'.charCodeAt(0);
  cstring(buf, at + 1, name);
  return buf;
}

/** Execute of the unnamed portal, all rows. */
export const EXECUTE = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]);
/** Sync: ends the batch; PostgreSQL commits its implicit transaction, or rolls it back after an error. */
export const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
/** Terminate: the polite end of a connection. */
export const TERMINATE = Buffer.from([0x58, 0, 0, 0, 4]);
/** SSLRequest (a message without a type byte). */
export const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f]);

/**
 * StartupMessage (protocol 3.0) with its parameters (user, database, …).
 * @example startup({ user: 'app', database: 'app' })
 */
export function startup(params: Record<string, string>): Buffer {
  const pairs = Object.entries(params).filter(([, v]) => v !== '');
  let size = 4 + 4 + 1;
  for (const [k, v] of pairs) size += utf8(k) + 1 + utf8(v) + 1;
  const buf = Buffer.allocUnsafe(size);
  buf.writeInt32BE(size, 0);
  buf.writeInt32BE(196_608, 4);
  let i = 8;
  for (const [k, v] of pairs) i = cstring(buf, cstring(buf, i, k), v);
  buf[i] = 0;
  return buf;
}

/**
 * PasswordMessage, also the carrier of SASL responses (`raw` bytes, no terminator).
 * @example password('md5…') ; password(Buffer.from('c=biws,…'), true)
 */
export function password(data: string | Buffer, raw = false): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const { buf, at } = message('p', bytes.length + (raw ? 0 : 1));
  bytes.copy(buf, at);
  if (!raw) buf[at + bytes.length] = 0;
  return buf;
}

/**
 * SASLInitialResponse for a mechanism.
 * @example saslInitial('SCRAM-SHA-256', Buffer.from('n,,n=*,r=…'))
 */
export function saslInitial(mechanism: string, data: Buffer): Buffer {
  const { buf, at } = message('p', utf8(mechanism) + 1 + 4 + data.length);
  const i = buf.writeInt32BE(data.length, cstring(buf, at, mechanism));
  data.copy(buf, i);
  return buf;
}

/**
 * A `text[]` value in PostgreSQL's array syntax: every element quoted, so any text is safe.
 * @example textArray(['a', 'b"c']) // '{"a","b\\"c"}'
 */
export function textArray(values: string[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out += `${i ? ',' : ''}"${v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v}"`;
  }
  return `${out}}`;
}

/** One backend message: its type byte and its body (without type and length). */
export interface BackendMessage {
  type: number;
  body: Buffer;
}

/**
 * Splits the bytes a server sends into messages. A message spanning several chunks is copied
 * once, when its last byte has arrived (a large JSON body is not copied at every chunk).
 */
export class MessageReader {
  private head: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private partsLength = 0;
  private need = 0;

  /** Feeds a chunk; calls `onMessage` for each complete message in order. */
  push(chunk: Buffer, onMessage: (m: BackendMessage) => void): void {
    if (this.need) {
      this.parts.push(chunk);
      this.partsLength += chunk.length;
      if (this.partsLength < this.need) return;
      chunk = Buffer.concat(this.parts, this.partsLength);
      this.parts = [];
      this.partsLength = 0;
      this.need = 0;
    } else if (this.head.length) {
      chunk = Buffer.concat([this.head, chunk]);
    }
    let at = 0;
    while (chunk.length - at >= 5) {
      const length = chunk.readInt32BE(at + 1);
      if (chunk.length - at < length + 1) break;
      onMessage({ type: chunk[at], body: chunk.subarray(at + 5, at + 1 + length) });
      at += length + 1;
    }
    const rest = chunk.subarray(at);
    if (rest.length >= 5) {
      this.parts = [rest];
      this.partsLength = rest.length;
      this.need = rest.readInt32BE(1) + 1;
      this.head = Buffer.alloc(0);
    } else {
      this.head = rest.length ? Buffer.from(rest) : Buffer.alloc(0);
    }
  }
}

/** Message type bytes the readers dispatch on. */
export const MSG = {
  authentication: 0x52, // R
  parameterStatus: 0x53, // S
  backendKeyData: 0x4b, // K
  readyForQuery: 0x5a, // Z
  error: 0x45, // E
  notice: 0x4e, // N
  notification: 0x41, // A
  dataRow: 0x44, // D
  commandComplete: 0x43, // C
  parseComplete: 0x31, // 1
} as const;

/** The fields of an ErrorResponse PostgreSQL reports, by their names in postgres.js (toDbError reads them). */
export interface PgErrorFields {
  severity?: string;
  code?: string;
  message: string;
  detail?: string;
  hint?: string;
  position?: string;
  schema_name?: string;
  table_name?: string;
  column_name?: string;
  constraint_name?: string;
}

const FIELD: Record<string, keyof PgErrorFields> = {
  V: 'severity',
  C: 'code',
  M: 'message',
  D: 'detail',
  H: 'hint',
  P: 'position',
  s: 'schema_name',
  t: 'table_name',
  c: 'column_name',
  n: 'constraint_name',
};

/**
 * An ErrorResponse as an Error carrying PostgreSQL's fields (`code` is the SQLSTATE), the
 * shape postgres.js gives, so `toDbError` and the callers that read `code` treat both alike.
 * @example const err = errorOf(body); err.code // '42501'
 */
export function errorOf(body: Buffer): Error & PgErrorFields {
  const fields: PgErrorFields = { message: 'database error' };
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const end = body.indexOf(0, at + 1);
    const key = FIELD[String.fromCharCode(body[at])];
    if (key) fields[key] = body.toString('utf8', at + 1, end);
    at = end + 1;
  }
  return Object.assign(new Error(fields.message), fields);
}

/**
 * The text of column `index` of a DataRow, or null.
 * @example dataRowText(body, 0)
 */
export function dataRowText(body: Buffer, index: number): string | null {
  let at = 2;
  for (let i = 0; i < index; i++) {
    const n = body.readInt32BE(at);
    at += 4 + Math.max(n, 0);
  }
  const n = body.readInt32BE(at);
  return n < 0 ? null : body.toString('utf8', at + 4, at + 4 + n);
}

/**
 * The row count of a CommandComplete tag (`INSERT 0 3`, `UPDATE 2`, `SELECT 1`), 0 when it has none.
 * @example tagCount(Buffer.from('UPDATE 2\0')) // 2
 */
export function tagCount(body: Buffer): number {
  const tag = body.toString('latin1', 0, body.length - 1);
  const n = Number(tag.slice(tag.lastIndexOf(' ') + 1));
  return Number.isFinite(n) ? n : 0;
}
