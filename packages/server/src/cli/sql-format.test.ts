import { describe, expect, it } from 'vitest';
import { formatCsv, formatResults, sqlErrorLines } from './sql-format.js';

const select = (rows: Array<Record<string, unknown>>, names = Object.keys(rows[0] ?? {})) => ({
  command: 'SELECT',
  rowCount: rows.length,
  columns: names.map((name) => ({ name })),
  rows,
});

describe('plinth sql output', () => {
  it('is psql’s aligned format: centred headers, numbers to the right, t/f, empty nulls, a row count', () => {
    expect(
      formatResults([
        select([
          { id: 1, title: 'café', done: true, note: null },
          { id: 10, title: 'a\nb', done: false, note: { a: 1 } },
        ]),
      ]),
    ).toBe(
      [
        ' id | title | done |  note',
        '----+-------+------+---------',
        '  1 | café  | t    |',
        ' 10 | a\\nb  | f    | {"a":1}',
        '(2 rows)',
        '',
      ].join('\n'),
    );
    expect(formatResults([select([], ['id'])])).toBe(' id\n----\n(0 rows)\n');
  });

  it('gives DDL its tag alone, writes their counts, and a blank line between results', () => {
    const tag = (command: string, rowCount: number) => ({ command, rowCount, columns: [], rows: [] });
    expect(formatResults([tag('CREATE TABLE', 0), tag('INSERT', 3), tag('UPDATE', 2), tag('DELETE', 0), tag('GRANT', 0)])).toBe(
      'CREATE TABLE\n\nINSERT 0 3\n\nUPDATE 2\n\nDELETE 0\n\nGRANT\n',
    );
  });

  it('--csv: the last result with columns, quoted where needed', () => {
    expect(formatCsv([select([{ a: 1 }]), select([{ text: 'x, "y"', n: 2, ok: false, none: null }])])).toBe(
      'text,n,ok,none\r\n"x, ""y""",2,f,\r\n',
    );
    expect(formatCsv([{ command: 'CREATE TABLE', rowCount: 0, columns: [], rows: [] }])).toBe('');
  });

  it('an error points at its line and column, in characters', () => {
    const query = 'select 1;\nselect \u00e9, nope\n  from x';
    const at = query.indexOf('nope') + 1;
    expect(sqlErrorLines('column "nope" does not exist', query, at)).toEqual([
      'line 2, column 11: column "nope" does not exist',
      'LINE 2: select é, nope',
      '                  ^',
    ]);
    expect(sqlErrorLines('syntax error', 'selec 1', null)).toEqual(['syntax error']);
  });
});
