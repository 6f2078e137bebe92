import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createClient } from '@plinth/sdk';
import { FILTER_OPERATORS } from '@plinth/shared';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitList as serverSplitList } from '../../../server/src/rest/request/parse.js';
import { formatList } from '../../../sdk/src/rest/query.js';
import type { ColumnDoc } from './openapi';
import { type FilterRow, filterSteps, js, type OrderRow, orderParam, orderSteps, renderChain, runChain, splitList } from './rest';
import { curlSnippet, shellQuote, shellWithVars } from './snippets';

// The pieces the API explorer's promise rests on: the SDK snippet shown is source code that
// makes the very request the page sent, `in` lists read like the server reads them, and shell
// words in the cURL snippet are what bash gives back.

const run = promisify(execFile);

const col = (name: string, kind: ColumnDoc['kind']): ColumnDoc => ({
  name,
  kind,
  type: kind,
  nullable: true,
  required: false,
  readOnly: false,
});
const COLUMNS = [col('id', 'integer'), col('title', 'string'), col('done', 'boolean'), col('price', 'number')];

/** A client whose fetch records the URL, method and body, and answers `[]`. */
function recordingClient() {
  const sent: Array<{ url: string; method: string; body: unknown; prefer: string | undefined }> = [];
  const client = createClient('http://api.test', 'pk_test', {
    auth: { persistSession: false, autoRefreshToken: false },
    fetch: async (input, init) => {
      const headers = (init?.headers ?? {}) as Record<string, string>;
      sent.push({ url: String(input), method: init?.method ?? 'GET', body: init?.body ?? null, prefer: headers.prefer });
      return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, sent };
}

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const filterRow = fc.oneof(
  fc.tuple(
    fc.constantFrom(...FILTER_OPERATORS.filter((o) => o !== 'in' && o !== 'is')),
    fc.constantFrom('id', 'title', 'done', 'price', 'other'),
    text,
  ),
  fc.tuple(
    fc.constant('in' as const),
    fc.constantFrom('id', 'title'),
    fc.array(text, { maxLength: 4 }).map((xs) => formatList(xs)),
  ),
  fc.tuple(fc.constant('is' as const), fc.constantFrom('title', 'done'), fc.constantFrom('null', 'true', 'false')),
) as fc.Arbitrary<FilterRow>;
const orderRow = fc.tuple(
  fc.constantFrom('id', 'title', 'a.b'),
  fc.constantFrom('asc' as const, 'desc' as const),
  fc.constantFrom(undefined, 'first' as const, 'last' as const),
) as fc.Arbitrary<OrderRow>;

describe('the SDK chain', () => {
  it('the rendered source sends the same request as the steps that ran (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(filterRow, { maxLength: 5 }), fc.array(orderRow, { maxLength: 3 }), async (filters, order) => {
        const where = filterSteps(filters, COLUMNS);
        expect('steps' in where).toBe(true);
        if (!('steps' in where)) return;
        const steps = [{ method: 'select' as const, args: ['*', { count: 'exact' }] }, ...where.steps, ...orderSteps(order)];
        const ran = recordingClient();
        await runChain(ran.client, 'todos', steps);
        const shown = recordingClient();
        // The snippet's code, evaluated as JavaScript on another client.
        await new Function('client', `return ${renderChain('todos', steps)};`)(shown.client);
        expect(shown.sent).toEqual(ran.sent);
        expect(ran.sent).toHaveLength(1);
        // And it is the request the filters describe, in the server's syntax.
        const query = new URL(ran.sent[0].url).searchParams;
        expect([...query].filter(([k]) => k !== 'order')).toEqual(filters.map(([op, c, v]) => [`${op}.${c}`, v]));
        expect(query.get('order')).toBe(order.length ? orderParam(order) : null);
        expect(ran.sent[0].prefer).toBe('count=exact');
      }),
      { numRuns: 150 },
    );
  });

  it('writes typed literals when the column has the type, text otherwise', () => {
    const where = filterSteps(
      [
        ['eq', 'id', '42'],
        ['eq', 'id', '042'],
        ['eq', 'done', 'true'],
        ['in', 'title', 'a,"b,c",'],
        ['is', 'done', 'null'],
      ],
      COLUMNS,
    );
    expect(where).toEqual({
      steps: [
        { method: 'eq', args: ['id', 42] },
        { method: 'eq', args: ['id', '042'] },
        { method: 'eq', args: ['done', true] },
        { method: 'in', args: ['title', ['a', 'b,c', '']] },
        { method: 'is', args: ['done', null] },
      ],
    });
    expect(renderChain('todos', [{ method: 'insert', args: [{ title: "it's", 'odd key': 1, n: null }] }])).toBe(
      "client\n  .from('todos')\n  .insert({\n    title: 'it\\'s',\n    'odd key': 1,\n    n: null\n  })",
    );
    expect(filterSteps([['in', 'title', '"open']], COLUMNS)).toEqual({ error: 'Filter 1 (in): A quoted item is not closed.' });
    expect(filterSteps([['eq', '', 'x']], COLUMNS)).toEqual({ error: 'Filter 1 names no column.' });
  });

  it('js() is JavaScript for the value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.stringify(new Function(`return ${js(v)};`)())).toBe(JSON.stringify(v));
        expect(JSON.stringify(new Function(`return ${js(v, 2)};`)())).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 },
    );
    expect(js({ __proto__: 1 })).toBe('{}');
    expect(js(JSON.parse('{"__proto__": {"admin": true}}'))).toBe("{ ['__proto__']: { admin: true } }");
  });
});

describe('in lists', () => {
  it("read back what the SDK's formatList wrote (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), (xs) => {
        expect(splitList(formatList(xs))).toEqual({ items: xs });
      }),
    );
  });

  it('are read as the server reads them: same items, or both refuse (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ',', '"', '\\', ' ') }), (s) => {
        let server: string[] | 'refused';
        try {
          server = serverSplitList(s, 'in.x');
        } catch {
          server = 'refused';
        }
        const ours = splitList(s);
        expect('items' in ours ? ours.items : 'refused').toEqual(server);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('shell words of the cURL snippet', () => {
  it('bash gives back the text, with each secret as its variable (property)', async () => {
    const secrets = [
      { value: 'sk_SECRET', variable: 'PLINTH_SECRET_KEY' },
      { value: 'eyTOKEN', variable: 'PLINTH_USER_TOKEN' },
    ];
    const env = { PATH: process.env.PATH, PLINTH_SECRET_KEY: 'sk_SECRET', PLINTH_USER_TOKEN: 'eyTOKEN' };
    const word = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      fc
        .array(fc.constantFrom('sk_SECRET', 'eyTOKEN', "'", '"', '$', '`', '\\', '!', ' ', 'a', '\n', 'é'), { maxLength: 10 })
        .map((x) => x.join('')),
    );
    const samples = fc.sample(word, 200).filter((s) => !s.includes('\0'));
    const script = samples.map((s) => `printf '%s\\0' ${shellWithVars(s, secrets)}`).join('\n');
    const out = await run('bash', ['-c', script], { env });
    expect(out.stdout.split('\0').slice(0, -1)).toEqual(samples);
    expect(samples.map((s) => shellWithVars(s, secrets)).join('')).not.toMatch(/sk_SECRET|eyTOKEN/);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellWithVars('apikey: sk_SECRET', secrets)).toBe('"apikey: $PLINTH_SECRET_KEY"');
  });

  it('names the public URL, every header and the body', () => {
    const curl = curlSnippet(
      {
        method: 'POST',
        url: 'http://127.0.0.1:9/api/v1/db/todos?select=id',
        headers: [
          ['apikey', 'pk_1'],
          ['authorization', 'Bearer eyJ.x.y'],
          ['content-type', 'application/json'],
        ],
        body: `{"title":"it's"}`,
      },
      {
        calledBase: 'http://127.0.0.1:9',
        publicBase: 'https://api.example.com/',
        secrets: [
          { value: 'pk_1', variable: 'PLINTH_PUBLIC_KEY' },
          { value: 'eyJ.x.y', variable: 'PLINTH_USER_TOKEN' },
        ],
      },
    );
    expect(curl).toBe(
      [
        "curl -X POST 'https://api.example.com/api/v1/db/todos?select=id' \\",
        '  -H "apikey: $PLINTH_PUBLIC_KEY" \\',
        '  -H "authorization: Bearer $PLINTH_USER_TOKEN" \\',
        "  -H 'content-type: application/json' \\",
        `  --data-raw '{"title":"it'\\''s"}'`,
      ].join('\n'),
    );
  });
});
