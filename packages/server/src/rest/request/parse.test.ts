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
      // docs/api.md §2 and §2.1
      '(',
      ')',
      ':',
      '!',
      '->',
      '->>',
      'not',
      'or',
      'and',
      'fts',
      'inner',
      'count()',
      'on_conflict',
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

describe('the grammar of relations, logic and search (docs/api.md)', () => {
  it('reads select as a tree: aliases, JSON paths, aggregates, embeddings with hints and !inner', () => {
    expect(
      parseQuery(
        'select=id,k:meta->>kind,total:count(),sum(n),writer:author!posts_author_id_fkey(name),comments!inner(body,user(*)),tags()',
        opts,
      ).select,
    ).toEqual([
      { kind: 'column', alias: null, column: 'id' },
      { kind: 'column', alias: 'k', column: 'meta->>kind' },
      { kind: 'aggregate', alias: 'total', fn: 'count', column: null },
      { kind: 'aggregate', alias: null, fn: 'sum', column: 'n' },
      {
        kind: 'embed',
        alias: 'writer',
        relation: 'author',
        hint: 'posts_author_id_fkey',
        inner: false,
        select: [{ kind: 'column', alias: null, column: 'name' }],
      },
      {
        kind: 'embed',
        alias: null,
        relation: 'comments',
        hint: null,
        inner: true,
        select: [
          { kind: 'column', alias: null, column: 'body' },
          { kind: 'embed', alias: null, relation: 'user', hint: null, inner: false, select: null },
        ],
      },
      { kind: 'embed', alias: null, relation: 'tags', hint: null, inner: false, select: [] },
    ]);
    expect(parseQuery('select="a,b",c', opts).select).toEqual([
      { kind: 'column', alias: null, column: 'a,b' },
      { kind: 'column', alias: null, column: 'c' },
    ]);
  });

  it('reads not., fts and relation-prefixed parameters', () => {
    const q = parseQuery(
      'not.in.id=1,2&fts(simple).body=cat -dog&comments.eq.approved=true&comments.user.not.is.ban=null&comments.order=id.desc&comments.limit=3&comments.offset=1',
      opts,
    );
    expect(q.filters).toEqual([
      { op: 'in', column: 'id', value: ['1', '2'], negate: true },
      { op: 'fts', column: 'body', value: 'cat -dog', config: 'simple' },
    ]);
    expect([...q.embedded.entries()]).toEqual([
      [
        'comments',
        {
          filters: [{ op: 'eq', column: 'approved', value: 'true' }],
          order: [{ column: 'id', desc: true, nulls: null }],
          limit: 3,
          offset: 1,
        },
      ],
      ['comments.user', { filters: [{ op: 'is', column: 'ban', value: 'null', negate: true }], order: [], limit: null, offset: null }],
    ]);
  });

  it('reads or/and groups, nested, negated, with quoted columns and values and in-lists', () => {
    const q = parseQuery(
      `or=(eq.status.open,and(gt.priority.3,is.owner.null))&not.and=(eq."a.b"."x,y",in.id.(1,"2,3"))&comments.or=(fts(english).body.cats and dogs)`,
      opts,
    );
    expect(q.filters).toEqual([
      {
        op: 'or',
        negate: false,
        items: [
          { op: 'eq', column: 'status', value: 'open' },
          {
            op: 'and',
            negate: false,
            items: [
              { op: 'gt', column: 'priority', value: '3' },
              { op: 'is', column: 'owner', value: 'null' },
            ],
          },
        ],
      },
      {
        op: 'and',
        negate: true,
        items: [
          { op: 'eq', column: 'a.b', value: 'x,y' },
          { op: 'in', column: 'id', value: ['1', '2,3'] },
        ],
      },
    ]);
    expect(q.embedded.get('comments')?.filters).toEqual([
      { op: 'or', negate: false, items: [{ op: 'fts', column: 'body', value: 'cats and dogs', config: 'english' }] },
    ]);
    // A value may hold dots: only the column ends at one.
    expect(parseQuery('or=(gt.price.3.5)', opts).filters).toEqual([
      { op: 'or', negate: false, items: [{ op: 'gt', column: 'price', value: '3.5' }] },
    ]);
  });

  it('reads upsert keys, resolution preferences and GET arguments', () => {
    expect(parseQuery('on_conflict=email,org', opts).onConflict).toEqual(['email', 'org']);
    expect(parsePrefer('resolution=merge-duplicates, return=minimal')).toEqual({ count: false, minimal: true, resolution: 'merge' });
    expect(parsePrefer('resolution=ignore-duplicates').resolution).toBe('ignore');
    expect(parseQuery('a=1&b=x&select=id&eq.id=2', { ...opts, args: true }).args).toEqual([
      ['a', '1'],
      ['b', 'x'],
    ]);
  });

  const refused: Array<[string, string]> = [
    ['or=(eq.a)', 'invalid_parameter'],
    ['or=(eq.a.1', 'invalid_parameter'],
    ['or=eq.a.1', 'invalid_parameter'],
    ['or=(zz.a.1)', 'invalid_parameter'],
    ['or=(eq.a.x(y))', 'invalid_parameter'],
    ['or=(in.a.1)', 'invalid_parameter'],
    [`or=${'or('.repeat(20)}eq.a.1${')'.repeat(20)}`, 'invalid_parameter'],
    ['select=a,(b)', 'invalid_parameter'],
    ['select=a(b', 'invalid_parameter'],
    ['select=a)b', 'invalid_parameter'],
    ['select=sum()', 'invalid_parameter'],
    ['select=x!a!b(c)', 'invalid_parameter'],
    ['select=a:', 'invalid_parameter'],
    [`select=${'a('.repeat(20)}b${')'.repeat(20)}`, 'invalid_parameter'],
    ['comments.nope.a=1', 'invalid_parameter'],
    ['comments.limit=x', 'invalid_parameter'],
    ['comments.order=a&comments.order=b', 'invalid_parameter'],
    ['fts().a=x', 'invalid_parameter'],
    ['on_conflict=', 'invalid_parameter'],
    ['a.=1', 'invalid_parameter'],
  ];
  for (const [qs, code] of refused) {
    it(`${qs.slice(0, 60)} → ${code}`, () => {
      expect(codeOf(() => parseQuery(qs, opts))).toBe(code);
    });
  }
});
