import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toDbError } from './types.js';
import { type BackendMessage, bind, dataRowText, errorOf, MessageReader, tagCount } from './wire.js';

// The wire protocol runAs speaks (db/wire.ts): what PostgreSQL sends, read back whole however
// the bytes are cut into chunks.
const backend = (type: string, body: Buffer) => {
  const b = Buffer.alloc(5 + body.length);
  b[0] = type.charCodeAt(0);
  b.writeInt32BE(4 + body.length, 1);
  body.copy(b, 5);
  return b;
};

describe('MessageReader', () => {
  it('yields the same messages whatever the chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('D', 'C', 'Z', 'E'), fc.uint8Array({ maxLength: 300 })), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (msgs, cuts) => {
          const bytes = Buffer.concat(msgs.map(([t, b]) => backend(t, Buffer.from(b))));
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const got: BackendMessage[] = [];
          const reader = new MessageReader();
          let from = 0;
          for (const to of [...at, bytes.length]) {
            reader.push(bytes.subarray(from, to), (m) => got.push({ type: m.type, body: Buffer.from(m.body) }));
            from = to;
          }
          expect(got.map((m) => [String.fromCharCode(m.type), [...m.body]])).toEqual(msgs.map(([t, b]) => [t, [...b]]));
        },
      ),
    );
  });
});

describe('backend messages', () => {
  it('an ErrorResponse keeps the fields toDbError reads', () => {
    const fields = 'SERROR\0VERROR\0C23505\0Mduplicate key\0Dalready there\0Htry another\0P7\0tnotes\0cnote\0nnotes_pkey\0\0';
    const err = errorOf(Buffer.from(fields));
    expect(err).toBeInstanceOf(Error);
    expect({ ...err, message: err.message }).toEqual({
      severity: 'ERROR',
      code: '23505',
      message: 'duplicate key',
      detail: 'already there',
      hint: 'try another',
      position: '7',
      table_name: 'notes',
      column_name: 'note',
      constraint_name: 'notes_pkey',
    });
    // …and the DbError made of it carries them on (a raise's detail and hint reach the client).
    expect(toDbError(err)).toMatchObject({
      sqlstate: '23505',
      detail: 'already there',
      hint: 'try another',
      position: 7,
      table: 'notes',
      column: 'note',
      constraint: 'notes_pkey',
    });
  });

  it('a DataRow gives each column’s text, null as null', () => {
    const row = Buffer.concat([Buffer.from([0, 3]), Buffer.from([0, 0, 0, 2]), Buffer.from('[]'), Buffer.from([255, 255, 255, 255])]);
    const full = Buffer.concat([row, Buffer.from([0, 0, 0, 1]), Buffer.from('7')]);
    expect([dataRowText(full, 0), dataRowText(full, 1), dataRowText(full, 2)]).toEqual(['[]', null, '7']);
  });

  it('a command tag gives its row count', () => {
    for (const [tag, n] of [
      ['INSERT 0 3', 3],
      ['UPDATE 12', 12],
      ['DELETE 0', 0],
      ['SELECT 1', 1],
      ['SET', 0],
    ] as const)
      expect(tagCount(Buffer.from(`${tag}\0`)), tag).toBe(n);
  });

  it('a Bind carries each value with its byte length, null as -1', () => {
    const b = bind('s', ['é', null, '']);
    // type, length, portal "", statement "s", 0 format codes, 3 values
    expect([...b.subarray(0, 12)]).toEqual([0x42, 0, 0, 0, b.length - 1, 0, 0x73, 0, 0, 0, 0, 3]);
    expect([...b.subarray(12)]).toEqual([0, 0, 0, 2, 0xc3, 0xa9, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0]);
  });
});
