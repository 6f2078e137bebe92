import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Property tests at the HTTP level: arbitrary names and values are data, never SQL, and
// never a 500 (CONTRIBUTING.md: a 500 caused by client input is a bug).
let t: TestServer;

const COLUMNS = ['id', 't', 'n', 'b', 'u', 'ts', 'j', 'arr', 'e', 'num', 'v'];
const EVIL = [
  'x"; drop table sentinel; --',
  "'; drop table sentinel; --",
  'sentinel',
  '$1',
  'id"',
  '"id"',
  'id; select 1',
  'a\0b',
  '',
  ' ',
  'ID',
  'é',
  '\\',
];

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create type mood as enum ('ok', 'sad');
    create table fz (id serial primary key, t text, n int, b bool, u uuid, ts timestamptz, j jsonb, arr text[], e mood, num numeric, v varchar(5));
    create table sentinel (id int primary key);
    insert into sentinel values (1);
    insert into fz (t, n, b) values ('seed', 1, true);
    create table fz_child (id serial primary key, fz_id int references fz, other_id int references fz, t text, tsv tsvector, j jsonb);
    insert into fz_child (fz_id, t, tsv, j) values (1, 'child', 'a:1 b:2', '{"k": [1, 2]}');
    create function fz_find(q text, lim int default 1) returns setof fz language sql stable as $$ select * from fz where t like q limit lim $$;
    create function fz_raise(msg text) returns int language plpgsql as $$ begin raise exception '%', msg; end $$;`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

const meta = fc.constantFrom(
  "'",
  '"',
  ';',
  '$1',
  '--',
  '\\',
  '\0',
  '%',
  '*',
  ',',
  '{',
  '}',
  '(',
  ')',
  'NULL',
  'null',
  'true',
  '1',
  '-1',
  '1e400',
  '2024-01-01',
  'ok',
  '::text',
  '/*',
  '\u{1F600}',
  'é',
  ' ',
);
/** Strings built from SQL and URL metacharacters, mixed with arbitrary unicode. */
const nasty = fc.oneof(
  fc.array(meta, { maxLength: 8 }).map((a) => a.join('')),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);
// Mostly real columns, so values reach PostgreSQL rather than stopping at the plan stage.
const name = fc.oneof(
  { arbitrary: fc.constantFrom(...COLUMNS), weight: 4 },
  { arbitrary: fc.constantFrom(...EVIL), weight: 1 },
  { arbitrary: nasty, weight: 1 },
);
const OPERATORS = ['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'is'];
/** PostgREST's operators beyond those, which both grammars take (docs/api.md, "Filters"). */
const EXTRA = [
  'match',
  'imatch',
  'isdistinct',
  'cs',
  'cd',
  'ov',
  'sl',
  'sr',
  'nxr',
  'nxl',
  'adj',
  'plfts',
  'phfts',
  'wfts',
  'eq(any)',
  'like(all)',
  'gt(any)',
];
const op = fc.oneof(fc.constantFrom(...OPERATORS, ...EXTRA), nasty);
const param: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(
    fc.tuple(op, name).map(([o, c]) => `${o}.${c}`),
    nasty,
  ),
  fc.tuple(fc.constantFrom('select', 'order', 'limit', 'offset', 'columns'), fc.oneof(nasty, name)),
  fc.tuple(nasty, nasty),
);

const OK_STATUS = new Set([200, 201, 204, 400, 403, 404, 405, 409]);
/** Statuses seen, to check the properties exercised both success and refusal. */
const seen = new Map<string, number>();

function expectClean(res: { statusCode: number; body: string }) {
  const key = res.statusCode >= 400 ? `${res.statusCode} ${JSON.parse(res.body).code}` : String(res.statusCode);
  seen.set(key, (seen.get(key) ?? 0) + 1);
  expect(OK_STATUS.has(res.statusCode), `${res.statusCode} ${res.body}`).toBe(true);
  if (res.statusCode >= 400) {
    const body = JSON.parse(res.body);
    expect(typeof body.code).toBe('string');
    expect(typeof body.message).toBe('string');
  } else if (res.statusCode !== 204 && res.body !== '') {
    JSON.parse(res.body);
  }
}

const url = (table: string, params: Array<[string, string]>) => `/api/v1/db/${encodeURIComponent(table)}?${new URLSearchParams(params)}`;
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

async function sentinelIntact() {
  const res = await t.app.inject({ url: '/api/v1/db/sentinel', headers: t.as.service });
  expect(res.body).toBe('[{"id":1}]');
}

describe('arbitrary requests', () => {
  it('GET with random filters, names and values is never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(param, { maxLength: 5 }), async (params) => {
        expectClean(await t.app.inject({ url: url('fz', params), headers: t.as.service }));
      }),
      // One request of each kind the last line counts on, whatever the random ones happen to be.
      {
        numRuns: 200,
        examples: [[[['eq.n', '1']]], [[['eq.n', 'x']]], [[['eq.nope', '1']]], [[['limit', '-x']]]],
      },
    );
    await sentinelIntact();
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['200', '400 invalid_value', '400 column_not_found', '400 invalid_parameter']));
  });

  it('writes with random keys and JSON values are never a 500', async () => {
    const row = fc.dictionary(name, fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty), { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(fc.oneof(row, fc.array(row, { maxLength: 3 })), fc.array(param, { maxLength: 3 }), async (body, params) => {
        const payload = JSON.stringify(body);
        const headers = { ...t.as.service, 'content-type': 'application/json' };
        expectClean(await t.app.inject({ method: 'POST', url: '/api/v1/db/fz', headers, payload }));
        expectClean(await t.app.inject({ method: 'PATCH', url: url('fz', params), headers, payload }));
        expectClean(await t.app.inject({ method: 'DELETE', url: url('fz', [...params, ['eq.id', '0']]), headers: t.as.service }));
      }),
      { numRuns: 120 },
    );
    await sentinelIntact();
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['201', '400 invalid_value', '400 filter_required']));
  });

  it('random table names are table_not_found, never SQL', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...EVIL), nasty).map(wellFormed), async (table) => {
        const res = await t.app.inject({ url: `/api/v1/db/${encodeURIComponent(table)}`, headers: t.as.service });
        expectClean(res);
        // `.` and `..` are dot segments: the URL itself drops them, so no table is named at all.
        const dots = table === '.' || table === '..';
        if (table !== 'sentinel' && table !== '') expect(res.json().code).toBe(dots ? 'route_not_found' : 'table_not_found');
      }),
      { numRuns: 100 },
    );
    await sentinelIntact();
  });

  it('a name made of SQL is just an unknown column', async () => {
    for (const evil of EVIL.filter((e) => !COLUMNS.includes(e) && e !== '')) {
      // In select and order a double-quoted name is read unquoted ("id" is id), so only filters take it as is.
      const lists = evil === '"id"' ? [] : [[['select', evil]], [['order', evil]]];
      for (const params of [[[`eq.${evil}`, '1']], ...lists] as Array<Array<[string, string]>>) {
        const res = await t.app.inject({ url: url('fz', params), headers: t.as.service });
        expect(res.statusCode, `${JSON.stringify(params)} ${res.body}`).toBe(400);
        expect(['column_not_found', 'invalid_value', 'invalid_parameter']).toContain(res.json().code);
      }
    }
    await sentinelIntact();
  });
});

// The grammar of docs/api.md §2 and §2.1 built at random: select trees with embedding, aggregates and JSON
// paths; conditions with not., or/and groups (nested, quoted), fts; embedded parameters; RPC
// calls and upserts. Never a 500, every error {code, message} with a known code.
const rel = fc.constantFrom('fz_child', 'fz', 'fz_child!fz_child_fz_id_fkey', 'fz!other_id', 'fz_id', 'other', 'nope');
const selectItem: fc.Arbitrary<string> = fc.letrec<{ item: string }>((tie) => ({
  item: fc.oneof(
    {
      arbitrary: fc.constantFrom(
        ...COLUMNS,
        '*',
        'j->k',
        'j->>k',
        'j->k->0',
        'arr->0',
        't->x',
        'count()',
        'sum(n)',
        'avg(t)',
        'max(id)',
        'id.count()::text',
        'n.sum()::x;y',
      ),
      weight: 6,
    },
    { arbitrary: fc.tuple(name, name).map(([a, c]) => `${a}:${c}`), weight: 1 },
    {
      arbitrary: fc
        .tuple(
          // `...`: a spread (with an alias, a refusal).
          fc.oneof(fc.option(name, { nil: undefined }), fc.constant('...'), fc.constant('...x:')),
          rel,
          fc.constantFrom('', '!inner', '!left', '!x!y'),
          fc.array(tie('item'), { maxLength: 3 }),
        )
        .map(([alias, r, mod, inner]) => `${alias?.startsWith('...') ? alias : alias ? `${alias}:` : ''}${r}${mod}(${inner.join(',')})`),
      weight: 2,
    },
  ),
})).item;
const quoted = (s: string) => `"${s.replace(/[\\"]/g, '\\$&')}"`;
const condition: fc.Arbitrary<string> = fc.letrec<{ cond: string }>((tie) => ({
  cond: fc.oneof(
    {
      arbitrary: fc
        .tuple(
          fc.constantFrom('', 'not.'),
          fc.constantFrom('eq', 'neq', 'gt', 'like', 'is', 'fts', 'fts(simple)', 'in', 'zz', 'cs', 'match', 'eq(any)', 'wfts(simple)'),
          fc.oneof(fc.constantFrom(...COLUMNS, 'j->>k'), nasty),
          nasty,
        )
        .map(([n, o, c, v]) => `${n}${o}.${/[.,()"]/.test(c) ? quoted(c) : c}.${o === 'in' ? `(${quoted(v)},x)` : quoted(v)}`),
      weight: 4,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('or', 'and', 'not.or', 'not.and'), fc.array(tie('cond'), { minLength: 1, maxLength: 3 }))
        .map(([g, items]) => `${g}(${items.join(',')})`),
      weight: 1,
    },
    { arbitrary: nasty, weight: 1 },
  ),
})).cond;
const grammarParam: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.array(selectItem, { minLength: 1, maxLength: 4 }).map((items): [string, string] => ['select', items.join(',')]),
  fc.tuple(fc.constant('select'), nasty),
  rel.map((r): [string, string] => ['select', `id,${r}(*)`]),
  fc
    .tuple(fc.constantFrom('or', 'and', 'not.or', 'fz_child.or', 'fz.and'), fc.array(condition, { minLength: 1, maxLength: 3 }))
    .map(([g, items]): [string, string] => [g, `(${items.join(',')})`]),
  fc.tuple(fc.constantFrom('or', 'and'), nasty),
  fc
    .tuple(
      fc.constantFrom('', 'fz_child.', 'fz.', 'nope.'),
      fc.constantFrom('not.eq', 'not.in', 'not.is', 'fts', 'fts(english)', 'fts(nope)', 'eq', 'not.fts'),
      fc.constantFrom(...COLUMNS, 'tsv', 'j->>k', 'j->k', 'j->k->0'),
      nasty,
    )
    .map(([r, o, c, v]): [string, string] => [`${r}${o}.${c}`, v]),
  fc.tuple(fc.constantFrom('fz_child.order', 'fz_child.limit', 'fz_child.offset', 'fz.order', 'on_conflict'), fc.oneof(name, nasty)),
);

describe('the relation, logic, search, aggregate and function grammar', () => {
  it('GET with random select trees, groups and embedded parameters is never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('fz', 'fz_child'), fc.array(grammarParam, { maxLength: 4 }), async (table, params) => {
        expectClean(await t.app.inject({ url: url(table, params), headers: t.as.service }));
      }),
      {
        numRuns: 300,
        // Run first whatever the seed: one of each refusal the random runs may or may not reach.
        examples: [
          ['fz_child', [['select', 'id,fz(*)']]],
          ['fz', [['select', 'id,nope(*)']]],
          ['fz', [['select', 'id,fz_child(nope)']]],
          ['fz', [['or', '(zz.t.1)']]],
          ['fz', [['select', 'id,t']]],
          ['fz', [['select', 'id,...fz_child(t,...fz(n),fz_child(id))']]],
          ['fz_child', [['select', 'count(),...fz!fz_child_fz_id_fkey(t)']]],
          ['fz', [['select', 'id,...fz_child(count())']]],
        ],
      },
    );
    await sentinelIntact();
    expect([...seen.keys()]).toEqual(
      expect.arrayContaining(['200', '400 relation_not_found', '400 ambiguous_relation', '400 invalid_parameter', '400 column_not_found']),
    );
  });

  it('RPC calls and upserts with random arguments, keys and preferences are never a 500', async () => {
    const arg = fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty);
    const rpcArgs = fc.oneof(
      fc.record({ q: arg }),
      fc.record({ q: arg, lim: arg }),
      fc.record({ msg: arg }),
      fc.dictionary(fc.oneof(fc.constantFrom('q', 'lim', 'msg'), name), arg, { maxKeys: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('fz_find', 'fz_raise', 'fz_raise', 'nope', '%20', 'fz'),
        rpcArgs,
        fc.array(grammarParam, { maxLength: 2 }),
        fc.constantFrom('resolution=merge-duplicates', 'resolution=ignore-duplicates', 'count=exact', ''),
        async (fn, args, params, prefer) => {
          const headers = { ...t.as.service, 'content-type': 'application/json', prefer };
          const qs = new URLSearchParams(params).toString();
          expectClean(await t.app.inject({ method: 'POST', url: `/api/v1/rpc/${fn}?${qs}`, headers, payload: JSON.stringify(args) }));
          const asQuery = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
          expectClean(await t.app.inject({ url: `/api/v1/rpc/${fn}?${asQuery}&${qs}`, headers: t.as.service }));
          const body = JSON.stringify({ id: 1, ...args });
          expectClean(await t.app.inject({ method: 'POST', url: `/api/v1/db/fz?${qs}`, headers, payload: body }));
        },
      ),
      {
        numRuns: 150,
        // Run first whatever the seed: one of each refusal checked for below.
        examples: [
          ['fz_raise', { msg: 'boom' }, [], ''],
          ['nope', { q: 'x' }, [], ''],
        ],
      },
    );
    await sentinelIntact();
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['404 function_not_found', '400 raised_exception']));
  });
});

describe('values round-trip', () => {
  it('any text stored is found again by eq and in, byte for byte', async () => {
    const text = fc
      .oneof(nasty, fc.string({ unit: 'grapheme', maxLength: 30 }))
      .map(wellFormed)
      .filter((s) => !s.includes('\0'));
    await fc.assert(
      fc.asyncProperty(text, async (s) => {
        const headers = { ...t.as.service, 'content-type': 'application/json' };
        const created = await t.app.inject({
          method: 'POST',
          url: '/api/v1/db/fz?select=id,t',
          headers,
          payload: JSON.stringify({ t: s }),
        });
        expect(created.statusCode, created.body).toBe(201);
        const { id } = created.json();
        expect(created.json().t).toBe(s);
        const byEq = await t.app.inject({
          url: url('fz', [
            ['eq.t', s],
            ['eq.id', String(id)],
            ['select', 't'],
          ]),
          headers: t.as.service,
        });
        expect(byEq.json()).toEqual([{ t: s }]);
        const quoted = `"${s.replace(/[\\"]/g, '\\$&')}"`;
        const byIn = await t.app.inject({
          url: url('fz', [
            ['in.t', `${quoted},other`],
            ['eq.id', String(id)],
            ['select', 't'],
          ]),
          headers: t.as.service,
        });
        expect(byIn.json()).toEqual([{ t: s }]);
      }),
      { numRuns: 100 },
    );
  });
});

// PostgREST's grammar at /rest/v1 (supabase/rest): `column=op.value`, `or=(column.op.value,…)`,
// select trees with casts, Prefer, Accept and Range at random. Never a 5xx; every error is
// PostgREST's {code, message, details, hint}.
const PGRST_STATUS = new Set([200, 201, 204, 206, 300, 400, 401, 403, 404, 405, 406, 409, 416]);
const pgrstSeen = new Map<string, number>();

function expectPostgrest(res: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  // HEAD: no body, an error's included.
  const key = res.statusCode >= 300 && res.body !== '' ? `${res.statusCode} ${JSON.parse(res.body).code}` : String(res.statusCode);
  pgrstSeen.set(key, (pgrstSeen.get(key) ?? 0) + 1);
  expect(PGRST_STATUS.has(res.statusCode), `${res.statusCode} ${res.body}`).toBe(true);
  if (res.statusCode >= 300 && res.body !== '') {
    expect(Object.keys(JSON.parse(res.body)).sort()).toEqual(['code', 'details', 'hint', 'message']);
  } else if (res.body !== '' && String(res.headers['content-type']).includes('json')) {
    JSON.parse(res.body);
  }
}

const pgCondition: fc.Arbitrary<string> = fc.letrec<{ cond: string }>((tie) => ({
  cond: fc.oneof(
    {
      arbitrary: fc
        .tuple(fc.oneof(fc.constantFrom(...COLUMNS, 'j->>k'), nasty), fc.constantFrom('', 'not.'), fc.oneof(op, fc.constant('fts')), nasty)
        .map(([c, n, o, v]) => `${/[.,()"]/.test(c) ? quoted(c) : c}.${n}${o}.${o === 'in' ? `(${quoted(v)},x)` : quoted(v)}`),
      weight: 4,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('or', 'and', 'not.or', 'not.and'), fc.array(tie('cond'), { minLength: 1, maxLength: 3 }))
        .map(([g, items]) => `${g}(${items.join(',')})`),
      weight: 1,
    },
    { arbitrary: nasty, weight: 1 },
  ),
})).cond;
const pgParam: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(
    name,
    fc.tuple(fc.constantFrom('', 'not.'), op, nasty).map(([n, o, v]) => `${n}${o}.${v}`),
  ),
  fc.tuple(
    fc.constantFrom('t', 'n', 'arr', 'j', 'j->>k', 'fz_child.t', 'fz.id', 'nope.x'),
    fc.tuple(op, nasty).map(([o, v]) => `${o}.${v}`),
  ),
  fc
    .tuple(fc.constantFrom('or', 'and', 'not.or', 'fz_child.or', 'fz_child.not.and'), fc.array(pgCondition, { minLength: 1, maxLength: 3 }))
    .map(([g, items]): [string, string] => [g, `(${items.join(',')})`]),
  fc
    .array(fc.oneof(selectItem, fc.constantFrom('n::text', 'id::int8', 'j->>k::int', 'x::"; drop', 'n.sum()', 'id.count()')), {
      minLength: 1,
      maxLength: 4,
    })
    .map((items): [string, string] => ['select', items.join(',')]),
  fc.tuple(
    fc.constantFrom('order', 'limit', 'offset', 'columns', 'on_conflict', 'fz_child.order', 'fz_child.limit'),
    fc.oneof(name, nasty),
  ),
  fc.tuple(nasty, nasty),
);
const prefer = fc
  .array(
    fc.constantFrom(
      'return=representation',
      'return=minimal',
      'return=headers-only',
      'count=exact',
      'count=planned',
      'resolution=merge-duplicates',
      'resolution=ignore-duplicates',
      'missing=default',
      'handling=strict',
      'tx=rollback',
      'params=single-object',
      'bogus',
    ),
    { maxLength: 3 },
  )
  .map((a) => a.join(', '));
const accept = fc.constantFrom('application/json', 'application/vnd.pgrst.object+json', 'text/csv', '*/*', 'image/png', '');
const range = fc.oneof(
  fc.constant(''),
  fc.tuple(fc.nat(5), fc.nat(5)).map(([a, b]) => `${a}-${b}`),
  nasty,
);

describe("PostgREST's grammar at /rest/v1", () => {
  const pgUrl = (path: string, params: Array<[string, string]>) => `/rest/v1/${path}?${new URLSearchParams(params)}`;
  const headersOf = (p: string, a: string, r: string) => {
    const h: Record<string, string> = { ...t.as.service };
    if (p) h.prefer = p;
    if (a) h.accept = a;
    if (r) h.range = wellFormed(r).replace(/[^\x20-\x7e]/g, '');
    return h;
  };

  it('reads and writes with random filters, select trees, preferences and Accept are never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'),
        fc.constantFrom('fz', 'fz_child', 'nope'),
        fc.array(pgParam, { maxLength: 4 }),
        prefer,
        accept,
        range,
        fc.oneof(fc.dictionary(name, fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty), { maxKeys: 3 }), fc.constant(null)),
        async (method, table, params, p, a, r, body) => {
          const headers = { ...headersOf(p, a, r), 'content-type': 'application/json' };
          const payload = method === 'GET' || method === 'HEAD' || body === null ? undefined : JSON.stringify(body);
          expectPostgrest(await t.app.inject({ method, url: pgUrl(table, params), headers, ...(payload ? { payload } : {}) }));
        },
      ),
      {
        numRuns: 300,
        examples: [
          ['GET', 'fz', [['t', 'eq.seed']], '', '', '', null],
          ['GET', 'fz', [['id', 'between.1']], '', '', '', null],
          ['GET', 'nope', [], '', '', '', null],
          ['GET', 'fz', [['select', 'id,fz_child(*)']], '', 'application/vnd.pgrst.object+json', '', null],
          ['GET', 'fz_child', [['select', 'id,fz(*)']], '', '', '', null],
        ],
      },
    );
    await sentinelIntact();
    expect([...pgrstSeen.keys()]).toEqual(expect.arrayContaining(['200', '400 PGRST100', '404 PGRST205', '300 PGRST201']));
  });

  it('function calls with random arguments and preferences are never a 5xx', async () => {
    const arg = fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('fz_find', 'fz_raise', 'nope', 'fz'),
        fc.oneof(
          fc.record({ q: arg }),
          fc.record({ q: arg, lim: arg }),
          fc.record({ msg: arg }),
          fc.dictionary(fc.oneof(fc.constantFrom('q', 'lim', 'msg'), name), arg, { maxKeys: 3 }),
        ),
        fc.oneof(fc.constant<Array<[string, string]>>([]), fc.array(pgParam, { maxLength: 2 })),
        prefer,
        accept,
        async (fn, args, params, p, a) => {
          const headers = { ...headersOf(p, a, ''), 'content-type': 'application/json' };
          expectPostgrest(await t.app.inject({ method: 'POST', url: pgUrl(`rpc/${fn}`, params), headers, payload: JSON.stringify(args) }));
          const asQuery = Object.entries(args).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
          expectPostgrest(await t.app.inject({ url: pgUrl(`rpc/${fn}`, [...asQuery, ...params]), headers: headersOf(p, a, '') }));
        },
      ),
      { numRuns: 150 },
    );
    await sentinelIntact();
    expect([...pgrstSeen.keys()]).toEqual(expect.arrayContaining(['404 PGRST202', '400 P0001']));
  });
});
