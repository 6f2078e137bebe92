import { describe, expect, it } from 'vitest';
import type { OutputItem, Plan } from '../plan/index.js';
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import { arrayLiteral, quoteIdent, toSql } from './index.js';

function column(name: string, castType: string): ColumnInfo {
  return {
    name,
    type: castType,
    castType,
    udt: castType,
    category: 'S',
    notNull: false,
    hasDefault: false,
    isPk: name === 'id',
    generated: false,
    enumValues: null,
    comment: null,
  };
}

function table(name: string, cols: ColumnInfo[]): TableInfo {
  return { name, kind: 'table', columns: new Map(cols.map((c) => [c.name, c])), columnList: cols, pk: ['id'], comment: null };
}

const id = column('id', 'integer');
const owner = column('owner', 'uuid');
const evil = column('x"; drop table t; --', 'text');
const items = table('items', [id, owner, evil]);
/** Columns returned under their own names. */
const out = (...cols: ColumnInfo[]): OutputItem[] => cols.map((column) => ({ kind: 'column', key: column.name, column, path: [] }));

describe('quoting', () => {
  it('quotes identifiers by doubling quotes', () => {
    expect(quoteIdent('a')).toBe('"a"');
    expect(quoteIdent('x"; drop table t; --')).toBe('"x""; drop table t; --"');
  });

  it('writes array literals with every item quoted and escaped', () => {
    expect(arrayLiteral([])).toBe('{}');
    expect(arrayLiteral(['a', 'b,c', 'NULL', '"q"', 'back\\slash', '{x}'])).toBe('{"a","b,c","NULL","\\"q\\"","back\\\\slash","{x}"}');
  });
});

describe('toSql', () => {
  it('binds every value and casts it to the column type, so indexes apply', () => {
    const plan: Plan = {
      kind: 'read',
      table: items,
      single: false,
      filters: [
        { op: 'eq', column: owner, value: "'; drop table items; --" },
        { op: 'in', column: id, value: ['1', '2'] },
        { op: 'like', column: evil, value: '%a%' },
        { op: 'is', column: id, value: 'null' },
      ],
      returning: out(id, evil),
      order: [{ column: id, desc: true, nulls: 'last' }],
      limit: 10,
      offset: 0,
      count: false,
    };
    const { text, values } = toSql(plan);
    expect(text).toBe(
      `select coalesce('[' || string_agg(row_to_json(_r)::text, ',') || ']', '[]') as body, count(*) as n, null::int8 as total from ` +
        `(select "id", "x""; drop table t; --" from "public"."items" where "owner" = $1[1]::text::uuid and "id" = any($1[2]::text::integer[]) ` +
        `and "x""; drop table t; --" like $1[3]::text and "id" is null order by "id" desc nulls last limit $1[4]::text::int8 offset $1[5]::text::int8) _r`,
    );
    expect(values).toEqual(["'; drop table items; --", '{"1","2"}', '%a%', '10', '0']);
  });

  it('counts with the same filters and parameters', () => {
    const plan: Plan = {
      kind: 'read',
      table: items,
      single: false,
      filters: [{ op: 'gt', column: id, value: '3' }],
      returning: out(id),
      order: [],
      limit: 1,
      offset: 0,
      count: true,
    };
    const { text, values } = toSql(plan);
    expect(text).toContain(', (select count(*) from "public"."items" where "id" > $1[1]::text::integer) as total from');
    expect(values).toEqual(['3', '1', '0']);
  });

  it('picks a row alias no column shadows', () => {
    const t = table('t', [column('_r', 'text'), column('_r_', 'text')]);
    const plan: Plan = {
      kind: 'delete',
      table: t,
      single: false,
      filters: [{ op: 'eq', column: t.columnList[0], value: 'a' }],
      returning: out(...t.columnList),
    };
    expect(toSql(plan).text).toMatch(
      /^with _r__ as \(delete from "public"\."t" where "_r" = \$1\[1\]::text::text returning "_r", "_r_"\) select .*row_to_json\(_r__\)/,
    );
  });

  it('inserts through json_populate_recordset with one bound payload', () => {
    const plan: Plan = {
      kind: 'insert',
      table: items,
      single: true,
      filters: [],
      returning: null,
      target: [owner],
      payload: '[{"owner":"x"}]',
      rows: 1,
      conflict: null,
    };
    expect(toSql(plan)).toEqual({
      text: 'insert into "public"."items" ("owner") select "owner" from json_populate_recordset(null::"public"."items", $1[1]::text::json)',
      values: ['[{"owner":"x"}]'],
    });
  });

  it('updates one column with the plain form and several with the row form', () => {
    const base = {
      kind: 'update' as const,
      table: items,
      single: false,
      filters: [{ op: 'eq' as const, column: id, value: '1' }],
      returning: null,
      payload: '{}',
    };
    expect(toSql({ ...base, target: [owner] }).text).toBe(
      'update "public"."items" set "owner" = (select "owner" from json_populate_record(null::"public"."items", $1[1]::text::json)) where "id" = $1[2]::text::integer',
    );
    expect(toSql({ ...base, target: [owner, evil] }).text).toContain(
      'set ("owner", "x""; drop table t; --") = (select "owner", "x""; drop table t; --" from',
    );
  });
});
