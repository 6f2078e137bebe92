import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.js';
import { parsePrefer, parseQuery, splitList } from './index.js';

const opts = { maxRows: 1000 };

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
}

describe('parseQuery', () => {
  it('reads filters, select, order, limit, offset', () => {
    expect(
      parseQuery('eq.owner=42&in.status=a,b&is.deleted_at=NULL&select=id,title&order=created_at.desc,id&limit=10&offset=20', opts),
    ).toEqual({
      filters: [
        { op: 'eq', column: 'owner', value: '42' },
        { op: 'in', column: 'status', value: ['a', 'b'] },
        { op: 'is', column: 'deleted_at', value: 'null' },
      ],
      select: [
        { kind: 'column', alias: null, column: 'id' },
        { kind: 'column', alias: null, column: 'title' },
      ],
      order: [
        { column: 'created_at', desc: true, nulls: null },
        { column: 'id', desc: false, nulls: null },
      ],
      limit: 10,
      offset: 20,
      columns: null,
      onConflict: null,
      embedded: new Map(),
      args: null,
    });
  });

  it('decodes with URLSearchParams semantics', () => {
    const q = parseQuery('eq.title=a+b%2Cc&eq.na%20me=%C3%A9', opts);
    expect(q.filters).toEqual([
      { op: 'eq', column: 'title', value: 'a b,c' },
      { op: 'eq', column: 'na me', value: 'é' },
    ]);
  });

  it('keeps dots after the operator in the column name', () => {
    expect(parseQuery('eq.a.b=1', opts).filters).toEqual([{ op: 'eq', column: 'a.b', value: '1' }]);
    expect(parseQuery('order=a.b.desc.nullslast', opts).order).toEqual([{ column: 'a.b', desc: true, nulls: 'last' }]);
  });

  it('turns * into % for like and ilike only', () => {
    expect(parseQuery('like.t=*a*&ilike.t=b*&eq.t=*', opts).filters.map((f) => ('value' in f ? f.value : null))).toEqual([
      '%a%',
      'b%',
      '*',
    ]);
  });

  it('keeps repeated filters (ANDed later)', () => {
    expect(parseQuery('neq.a=1&neq.a=2', opts).filters).toHaveLength(2);
  });

  it('clamps limit and treats select=* and empty select as every column', () => {
    expect(parseQuery('limit=5000', opts).limit).toBe(1000);
    expect(parseQuery('limit=5000', { maxRows: 50 }).limit).toBe(50);
    expect(parseQuery('select=*', opts).select).toBeNull();
    expect(parseQuery('select=', opts).select).toBeNull();
    expect(parseQuery('select= a , b ', opts).select).toEqual([
      { kind: 'column', alias: null, column: 'a' },
      { kind: 'column', alias: null, column: 'b' },
    ]);
    expect(parseQuery('', opts)).toMatchObject({ limit: null, offset: null, select: null });
  });

  const errors: Array<[string, string]> = [
    ['foo=1', 'invalid_parameter'],
    ['=1', 'invalid_parameter'],
    ['nope.col=1', 'invalid_parameter'],
    ['eq.=1', 'invalid_parameter'],
    ['.col=1', 'invalid_parameter'],
    ['limit=-1', 'invalid_parameter'],
    ['limit=1.5', 'invalid_parameter'],
    ['limit=', 'invalid_parameter'],
    ['offset=x', 'invalid_parameter'],
    ['offset=99999999999999999999', 'invalid_parameter'],
    ['limit=1&limit=2', 'invalid_parameter'],
    ['select=a,,b', 'invalid_parameter'],
    ['order=,a', 'invalid_parameter'],
    ['order=.desc', 'invalid_parameter'],
    ['is.a=maybe', 'invalid_value'],
    ['in.a="x', 'invalid_value'],
    ['in.a="x"y', 'invalid_value'],
    ['eq.a=x%00', 'invalid_value'],
  ];
  for (const [qs, code] of errors) {
    it(`${qs} → ${code}`, () => {
      expect(codeOf(() => parseQuery(qs, opts))).toBe(code);
    });
  }

  it('never throws anything but ApiError, whatever the input', () => {
    const chars = fc.constantFrom(
      '.',
      ',',
      '=',
      '&',
      '"',
      '\\',
      '*',
      '%',
      '+',
      ' ',
      'a',
      'eq',
      'in',
      'is',
      'select',
      'order',
      'limit',
      'offset',
      '1',
      '-',
      '\0',
      '%00',
      '%ZZ',
      'é',
      '\u{1F600}',
    );
    const structured = fc.array(chars, { maxLength: 30 }).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), structured), (qs) => {
        codeOf(() => parseQuery(qs, opts));
      }),
      { numRuns: 200 },
    );
  });
});

describe('splitList', () => {
  it('splits on commas outside double quotes', () => {
    expect(splitList('a,"b,c",d', 'p')).toEqual(['a', 'b,c', 'd']);
    expect(splitList('"a\\"b",', 'p')).toEqual(['a"b', '']);
    expect(splitList('', 'p')).toEqual([]);
    expect(splitList(',', 'p')).toEqual(['', '']);
  });

  it('round-trips any list written with quotes', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 8 }), (items) => {
        const written = items.map((s) => `"${s.replace(/[\\"]/g, '\\$&')}"`).join(',');
        expect(splitList(written, 'p')).toEqual(items);
      }),
      { numRuns: 200 },
    );
  });
});

describe('parsePrefer', () => {
  it('reads count=exact and return=minimal', () => {
    expect(parsePrefer(undefined)).toEqual({ count: false, minimal: false });
    expect(parsePrefer('return=minimal, count=exact')).toEqual({ count: true, minimal: true });
    expect(parsePrefer(['count=exact', 'handling=lenient'])).toEqual({ count: true, minimal: false });
    expect(parsePrefer('return=representation')).toEqual({ count: false, minimal: false });
  });
});
