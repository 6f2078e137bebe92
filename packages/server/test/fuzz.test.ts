import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { ERROR_STATUS } from '@plinth/shared';
import fc from 'fast-check';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { cleanup, type Instance, startInstance } from './cluster.js';
import { freshDbTarget, type TestDbTarget } from './db.js';

// Hostile input over the whole HTTP surface (issue 15): every route of the OpenAPI document,
// the auth and management routes and unknown ones, with adversarial methods, paths, query
// strings, headers, bodies and tokens, against a real server process. Asserted: never a 5xx;
// every error in the one shape with a known code; a canary row owned by another user never
// read, changed or deleted; the server's memory back near its baseline afterwards.
// Seeded and reproducible: FUZZ_SEED; FUZZ_RUNS requests (`npm run fuzz` runs 10,000).

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? 15_2026);
const PK = `pk_fuzz_${'3c4d5e6f'.repeat(5)}`;
const SK = `sk_fuzz_${'7a8b9c0d'.repeat(5)}`;
const PUBLIC_URL = 'http://fuzz.test';
const MARKER = `canary-${Math.random().toString(36).slice(2)}-secret`;
const stack = cleanup();
let target: TestDbTarget;
let server: Instance;

interface Fixtures {
  canaryId: number;
  canaryOwner: string;
  userId: string;
  ownNoteId: number;
  tokens: string[];
  routes: Array<{ method: string; path: string; body: string[] }>;
}
let fx: Fixtures;

const ENV = {
  PUBLIC_URL,
  PLINTH_PUBLIC_KEY: PK,
  PLINTH_SECRET_KEY: SK,
  // One client IP sends everything: lift the per-IP limits so the requests reach the handlers.
  AUTH_RATE_REQUESTS_IP: '100000000/60',
  AUTH_RATE_SIGNIN_IP: '100000000/900',
  AUTH_RATE_EMAIL_UNKNOWN_IP: '100000000/3600',
  AUTH_RATE_SMS_IP: '100000000/3600',
  // Cheap hashes: the sign-ins are about input, not argon2's cost.
  AUTH_ARGON2_MEMORY_KIB: '1024',
  AUTH_ARGON2_TIME_COST: '1',
};

/** A token signed by a key that is not the project's, and other forgeries. */
async function forgeries(claims: Record<string, unknown>): Promise<string[]> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const now = Math.floor(Date.now() / 1000);
  const other = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: (await exportJWK(publicKey)).x ?? 'x' })
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: now + 3600 })}.`;
  const hs = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(PK));
  return [other, none, hs];
}

beforeAll(async () => {
  target = stack.add(await freshDbTarget(), (t) => t.cleanup());
  // Set up in-process on the same database (tokens signed with the project's key, an expired
  // one, an OAuth state), then serve it from a real process.
  const config = loadConfig(
    { LOG_LEVEL: 'silent', ...ENV },
    { dataDir: target.dataDir, databaseUrl: target.databaseUrl, port: 0 },
    target.dataDir,
  );
  const setup = await buildApp({ config, logger: pino({ level: 'silent' }) });
  try {
    const inject = async (method: string, url: string, payload?: unknown, headers: Record<string, string> = { apikey: PK }) => {
      const res = await setup.app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json();
    };
    await inject(
      'POST',
      '/api/v1/sql',
      {
        query: `create table canary (id bigserial primary key, owner uuid not null default auth.uid(), secret text not null);
          create policy own on canary using (owner = auth.uid()) with check (owner = auth.uid());
          create table notes (id bigserial primary key, owner uuid not null default auth.uid(), title text, n int, tags text[], doc jsonb);
          create policy own on notes using (owner = auth.uid()) with check (owner = auth.uid());
          create view note_titles as select id, owner, title from notes;
          create table note_links (id bigserial primary key, owner uuid not null default auth.uid(),
            note_id bigint references notes, canary_id bigint references canary, label text);
          create policy own on note_links using (owner = auth.uid()) with check (owner = auth.uid());
          create function notes_like(q text) returns setof notes language sql stable as $$ select * from notes where title ilike q $$;
          create function canary_peek() returns text language sql stable as $$ select string_agg(secret, ',') from canary $$;
          create function fail_with(msg text) returns void language plpgsql as $$ begin raise exception '%', msg using hint = 'h'; end $$;
          create function closed_fn() returns text language sql as $$ select secret from canary limit 1 $$;
          grant execute on function notes_like(text), canary_peek(), fail_with(text) to anon, authenticated;`,
      },
      { authorization: `Bearer ${SK}` },
    );
    const victim = await inject('POST', '/v1/auth/signup', { email: 'victim@example.com', password: 'victim password 1' });
    const canary = await inject(
      'POST',
      '/api/v1/db/canary',
      { secret: MARKER },
      { apikey: PK, authorization: `Bearer ${victim.session.access_token}` },
    );
    const me = await inject('POST', '/v1/auth/signup', { email: 'fuzzer@example.com', password: 'fuzzer password 1' });
    const asMe = { apikey: PK, authorization: `Bearer ${me.session.access_token}` };
    const note = await inject('POST', '/api/v1/db/notes', { title: 'mine', n: 1, tags: ['a'], doc: { k: 1 } }, asMe);
    // A link from my note to the victim's canary: embedding it must show null, never the secret.
    await inject('POST', '/api/v1/db/note_links', { note_id: note.id, canary_id: canary.id, label: 'to the canary' }, asMe);
    const sessionId = JSON.parse(Buffer.from(me.session.access_token.split('.')[1], 'base64url').toString()).session_id;
    const claims = { sub: me.user.id, session_id: sessionId, role: 'authenticated' };
    const expired = (await setup.tokens.sign(claims, -120)).token;
    // Storage: a private bucket with the victim's secret file (no policy: only the secret key
    // reads it), and a signed URL for another object, whose token the run swaps everywhere.
    const asService = { authorization: `Bearer ${SK}` };
    await inject('POST', '/api/v1/storage/buckets', { name: 'files' }, asService);
    for (const [name, body] of [
      ['victim/secret.txt', MARKER],
      ['shared/info.txt', 'nothing secret'],
    ]) {
      const up = await setup.app.inject({
        method: 'POST',
        url: `/api/v1/storage/object/files/${name}`,
        headers: { ...asService, 'content-type': 'text/plain' },
        payload: body,
      });
      expect(up.statusCode, up.body).toBe(201);
    }
    const signedUrl: string = (await inject('POST', '/api/v1/storage/sign/files/shared/info.txt', { expires_in: 3600 }, asService))
      .signed_url;
    const signedToken = new URL(signedUrl, PUBLIC_URL).searchParams.get('token') ?? '';
    const state = await setup.tokens.signState({ provider: 'github', flow: 'x' }, 600);
    const access: string = me.session.access_token;
    const [head, payload, sig] = access.split('.');
    const tamperedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: victim.user.id }),
    ).toString('base64url');
    const doc = await inject('GET', '/api/v1/openapi.json', undefined, { authorization: `Bearer ${SK}` });
    const routes: Fixtures['routes'] = [];
    for (const [path, ops] of Object.entries(
      doc.paths as Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: object } }> } }>>,
    )) {
      for (const [method, op] of Object.entries(ops)) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
        const props = op.requestBody?.content?.['application/json']?.schema?.properties;
        routes.push({ method: method.toUpperCase(), path, body: props ? Object.keys(props) : [] });
      }
    }
    fx = {
      canaryId: canary.id,
      canaryOwner: victim.user.id,
      userId: me.user.id,
      ownNoteId: note.id,
      routes,
      tokens: [
        access,
        expired,
        state,
        signedToken,
        me.refresh_token ?? me.session.refresh_token,
        `${head}.${tamperedPayload}.${sig}`,
        `${head}.${payload}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`,
        ...(await forgeries(claims)),
        PK,
        'sk_not_the_key',
      ],
    };
  } finally {
    await setup.close();
  }
  server = stack.add(
    await startInstance(
      // The same data dir as the setup: the storage files it wrote are there.
      target.databaseUrl ? { ...ENV, DATABASE_URL: target.databaseUrl, DATA_DIR: target.dataDir } : ENV,
      target.databaseUrl ? [] : ['--data-dir', target.dataDir],
    ),
    (i) => i.stop(),
  );
}, 120_000);
afterAll(async () => {
  await stack.run();
}, 60_000);

interface Req {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string | Buffer | null;
}

/**
 * Sends one request on a connection of its own (a reused keep-alive connection that the server
 * closed after a refused request would fail the next one for the client's sake); resolves with
 * status and body text.
 */
function send(r: Req): Promise<{ status: number; body: string; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: server.port, method: r.method, path: r.path, headers: r.headers, agent: false, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            contentType: String(res.headers['content-type'] ?? ''),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A request too big to read (headers over 16 KiB, a body over BODY_LIMIT) is answered
      // (431, 413) and the connection closed while the client is still writing: it may see
      // the reset before the answer.
      // A HEAD whose headers overflow gets the 431 with its JSON body (the server cannot know
      // the method of a request line it could not read in one piece): the client, expecting no
      // body after a HEAD, calls it a parse error.
      const headOverflow = r.method === 'HEAD' && String(err.code).startsWith('HPE_');
      if ((err.code === 'ECONNRESET' || err.code === 'EPIPE' || headOverflow) && tooBig(r))
        resolve({ status: -1, body: '', contentType: '' });
      else reject(err);
    });
    if (r.body !== null) {
      // Node's client sends a TRACE body without a length, which the server then reads as the
      // next request: say the length, as any client does.
      req.setHeader('content-length', Buffer.byteLength(r.body));
      req.end(r.body);
    } else req.end();
  });
}

function tooBig(r: Req): boolean {
  const headerBytes = r.path.length + Object.entries(r.headers).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  return headerBytes > 16 * 1024 || (r.body?.length ?? 0) > 1024 * 1024;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

// ---------------------------------------------------------------- arbitraries
const junk = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    "'",
    '"',
    ';--',
    '$1',
    '%00',
    '%',
    '%zz',
    '..',
    '../..',
    '\\',
    '{}',
    '[]',
    'null',
    '-1',
    '1e400',
    'NaN',
    '__proto__',
    'constructor',
    'é',
    '\u{1F600}',
    '*',
  ),
);
const huge = fc.constantFrom(1_000, 20_000, 70_000).map((n) => 'x'.repeat(n));
const id = () =>
  fc.constantFrom(String(fx.canaryId), String(fx.ownNoteId), fx.canaryOwner, fx.userId, '0', '-1', '99999999999999999999', 'not-a-uuid');
const token = () => fc.constantFrom(...fx.tokens);

function pathFor(template: string): fc.Arbitrary<string> {
  const parts = template.split('/').map((seg) => {
    if (!seg.startsWith('{')) return fc.constant(seg);
    return fc.oneof(
      id(),
      junk.map(encodeURIComponent),
      fc.constantFrom(
        'canary',
        'notes',
        'note_titles',
        'pg_authid',
        'auth.users',
        'files',
        'victim/secret.txt',
        'shared/info.txt',
        'files/victim/secret.txt',
      ),
    );
  });
  return fc.tuple(...parts).map((p) => p.join('/'));
}

const restPath = () =>
  fc.oneof(
    fc.constantFrom('canary', 'notes', 'note_titles').chain((table) =>
      fc.oneof(
        fc.constant(`/api/v1/db/${table}`),
        id().map((x) => `/api/v1/db/${table}/${encodeURIComponent(x)}`),
      ),
    ),
    junk.map((t) => `/api/v1/db/${encodeURIComponent(t)}`),
    fc.constantFrom('/api/v1/db/', '/api/v1/db//x', '/api/v1/db/canary/1/2', '/api/v1/db/%E0%A4%A'),
    fc.constantFrom('notes_like', 'canary_peek', 'fail_with', 'closed_fn', 'nope').map((f) => `/api/v1/rpc/${f}`),
    junk.map((f) => `/api/v1/rpc/${encodeURIComponent(f)}`),
  );
const anyPath = () =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...fx.routes.map((r) => r.path)).chain(pathFor), weight: 25 },
    { arbitrary: restPath(), weight: 25 },
    {
      arbitrary: fc.constantFrom(
        '/health',
        '/metrics',
        '/sdk/plinth.js',
        '/console',
        '/v1/auth/.well-known/jwks.json',
        '/api/v1/openapi.json',
      ),
      weight: 5,
    },
    { arbitrary: fc.array(junk.map(encodeURIComponent), { maxLength: 4 }).map((a) => `/${a.join('/')}`), weight: 5 },
    { arbitrary: huge.map((h) => `/api/v1/db/${h}`), weight: 1 },
  );

const queryPart = () =>
  fc.oneof(
    fc
      .tuple(
        fc.constantFrom('eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'is', 'cs', 'zz'),
        fc.constantFrom('id', 'owner', 'title', 'n', 'tags', 'doc', 'secret', 'nope'),
      )
      .chain(([o, c]) => fc.oneof(id(), junk).map((v) => [`${o}.${c}`, v] as [string, string])),
    fc.tuple(
      fc.constantFrom('select', 'order', 'limit', 'offset', 'redirect_url', 'token', 'state', 'code', 'to', 'status', 'email'),
      fc.oneof(junk, id(), token()),
    ),
    fc.tuple(junk, junk),
    // The grammar of docs/api.md §2 and §2.1: embedding, logic, negation, JSON paths, search, aggregates, upsert keys, arguments.
    fc.tuple(
      fc.constant('select'),
      fc.oneof(
        fc.constantFrom(
          'id,note_links(id,canary(secret))',
          'id,canary!inner(secret)',
          '*,notes(*),canary(*)',
          'secret,note_links(count())',
          'owner,count(),max(n)',
          'doc->k,doc->>k,tags->0',
          'x:note_links!note_links_canary_id_fkey(label)',
          'notes(canary(secret)',
        ),
        junk.map((j) => `id,${j}(${j})`),
      ),
    ),
    fc
      .tuple(
        fc.constantFrom('not.eq', 'not.in', 'fts', 'fts(simple)', 'note_links.eq', 'canary.eq', 'note_links.not.is', 'notes.like'),
        fc.constantFrom('id', 'title', 'secret', 'label', 'doc->>k', 'doc->k', 'nope'),
      )
      .chain(([o, c]) => fc.oneof(id(), junk).map((v) => [`${o}.${c}`, v] as [string, string])),
    fc.tuple(
      fc.constantFrom('or', 'and', 'not.or', 'note_links.or', 'on_conflict', 'note_links.order', 'note_links.limit', 'q', 'msg'),
      fc.oneof(
        fc.constantFrom('(eq.id.1,and(like.title.*a*,is.n.null))', '(not.eq.secret."x,y")', 'id', 'owner,id', '(in.id.(1,2))', '%', '2'),
        junk,
      ),
    ),
  );
const query = () =>
  fc.oneof(
    { arbitrary: fc.constant(''), weight: 15 },
    { arbitrary: fc.array(queryPart(), { maxLength: 5 }).map((ps) => `?${new URLSearchParams(ps)}`), weight: 30 },
    { arbitrary: junk.map((j) => `?${encodeURIComponent(j)}`), weight: 5 },
    { arbitrary: huge.map((h) => `?eq.title=${h}`), weight: 1 },
  );

// Mostly what a real client sends (so requests reach the handlers), with forgeries and junk
// mixed in, and now and then something huge.
const credentials = () =>
  fc.record(
    {
      apikey: fc.oneof(
        { arbitrary: fc.constant(PK), weight: 60 },
        { arbitrary: fc.oneof(junk, token()), weight: 15 },
        { arbitrary: huge, weight: 1 },
      ),
      authorization: fc.oneof(
        { arbitrary: fc.constant(`Bearer ${fx.tokens[0]}`), weight: 30 },
        { arbitrary: token().map((t) => `Bearer ${t}`), weight: 30 },
        { arbitrary: token().map((t) => `bearer  ${t}`), weight: 5 },
        { arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `Bearer ${PK}`, 'Bearer a.b.c', 'Bearer ...'), weight: 10 },
        { arbitrary: junk.map((j) => `Bearer ${j}`), weight: 10 },
        { arbitrary: huge.map((h) => `Bearer ${h}`), weight: 1 },
      ),
      cookie: fc.oneof(
        junk.map((j) => `plinth_admin=${encodeURIComponent(j)}`),
        token().map((t) => `plinth_admin=${t}`),
      ),
    },
    { requiredKeys: [] },
  );

const contentType = fc.oneof(
  { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 3 },
  {
    // Lies: a JSON body said to be something else, or an encoding it is not in.
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-16',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      'application/vnd.pgrst.object+json',
      'application/jsonx',
      '',
    ),
    weight: 2,
  },
);

const deep = fc.integer({ min: 10, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
const value = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    junk,
    token(),
    id(),
    fc.constantFrom('victim@example.com', 'fuzzer@example.com', 'fuzzer password 1', 'http://evil.test', 'javascript:alert(1)'),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.jsonValue({ maxDepth: 3 }),
  );
const bodyFor = (keys: string[]) =>
  fc.oneof(
    { arbitrary: fc.constant(null), weight: 1 },
    {
      arbitrary: fc
        .dictionary(fc.oneof(fc.constantFrom(...keys, 'title', 'secret', 'owner', 'id', 'n', 'tags', 'doc'), junk), value(), { maxKeys: 6 })
        .map((o) => JSON.stringify(o)),
      weight: 6,
    },
    {
      arbitrary: fc.constantFrom(...keys, 'a').map((k) => `{"__proto__":{"${k}":1,"admin":true},"constructor":{"prototype":{"x":1}}}`),
      weight: 1,
    },
    { arbitrary: fc.array(value(), { maxLength: 4 }).map((a) => JSON.stringify(a)), weight: 1 },
    { arbitrary: fc.oneof(junk, fc.constantFrom('{', '{"a":', '[1,]', 'nul', '"\\u0000"', '{"title":"\\ud800"}')), weight: 2 },
    { arbitrary: deep, weight: 1 },
    { arbitrary: fc.constantFrom(1_000_000, 1_200_000).map((n) => JSON.stringify({ title: 'x'.repeat(n) })), weight: 1 },
  );

const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'), weight: 10 },
  { arbitrary: fc.constantFrom('PROPFIND', 'TRACE', 'SEARCH', 'PURGE'), weight: 1 },
);

const requestArb = () =>
  fc
    .record({
      route: fc.oneof(
        { arbitrary: fc.constantFrom(...fx.routes).map((r) => ({ method: r.method, path: r.path, body: r.body })), weight: 3 },
        { arbitrary: fc.constant(null), weight: 2 },
      ),
      method,
      path: anyPath(),
      query: query(),
      creds: credentials(),
      contentType,
      extra: fc.array(
        fc.tuple(
          fc.constantFrom('prefer', 'x-forwarded-for', 'origin', 'range', 'accept', 'x-plinth-admin', 'sec-fetch-site', 'apikey'),
          fc.oneof(
            { arbitrary: junk, weight: 40 },
            {
              arbitrary: fc.constantFrom(
                'return=minimal',
                'count=exact',
                'return=representation',
                'resolution=merge-duplicates',
                'resolution=ignore-duplicates',
                '1',
                'same-origin',
                'http://fuzz.test',
              ),
              weight: 30,
            },
            { arbitrary: huge, weight: 1 },
          ),
        ),
        { maxLength: 3 },
      ),
      repeatAuth: fc.boolean(),
    })
    .chain((r) =>
      (r.route ? pathFor(r.route.path) : fc.constant(r.path)).chain((path) =>
        bodyFor(r.route?.body ?? []).map((body): Req => {
          const headers: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(r.creds)) if (v !== undefined) headers[k] = printable(v as string);
          if (r.repeatAuth && headers.authorization) headers.authorization = [headers.authorization as string, `Bearer ${fx.tokens[0]}`];
          for (const [k, v] of r.extra) headers[k] = printable(v);
          const m = r.route && r.method !== 'OPTIONS' ? r.route.method : r.method;
          if (body !== null && m !== 'GET' && m !== 'HEAD') {
            if (r.contentType) headers['content-type'] = r.contentType;
            return { method: m, path: path + r.query, headers, body };
          }
          return { method: m, path: path + r.query, headers, body: null };
        }),
      ),
    );

/** Header values the HTTP client can send (it refuses control characters). */
const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

// ---------------------------------------------------------------- the run
const KNOWN = new Set(Object.keys(ERROR_STATUS));
const seen = new Map<string, number>();

describe('hostile input over the whole HTTP surface', () => {
  it(`${RUNS} seeded requests: never a 5xx, errors in the one shape with known codes, the canary untouched, memory back`, async () => {
    expect(fx.routes.length).toBeGreaterThan(30);
    const warm = Math.min(200, Math.floor(RUNS / 10));
    let baseline = 0;
    let count = 0;
    await fc.assert(
      fc.asyncProperty(requestArb(), async (r) => {
        if (++count === warm) baseline = rssMiB(server.proc.pid ?? 0);
        const res = await send(r);
        const where = `${r.method} ${r.path.slice(0, 200)} → ${res.status} ${res.body.slice(0, 300)}`;
        if (res.status === -1) {
          seen.set('reset (too big)', (seen.get('reset (too big)') ?? 0) + 1);
          return;
        }
        expect(res.status, where).toBeGreaterThanOrEqual(100);
        expect(res.status, where).toBeLessThan(500);
        expect(res.body.includes(MARKER), `canary read: ${where}`).toBe(false);
        if (res.status >= 400 && r.method !== 'HEAD') {
          expect(res.contentType, where).toMatch(/^application\/json/);
          const body = JSON.parse(res.body);
          expect(KNOWN.has(body.code), where).toBe(true);
          expect(typeof body.message, where).toBe('string');
          seen.set(body.code, (seen.get(body.code) ?? 0) + 1);
        } else seen.set(String(res.status), (seen.get(String(res.status)) ?? 0) + 1);
      }),
      {
        numRuns: RUNS,
        seed: SEED,
        endOnFailure: true,
        // The failing request in a few lines (its huge values cut), and how to run it again.
        reporter: (out) => {
          if (!out.failed) return;
          const [r] = (out.counterexample ?? []) as [Req];
          const cut = (v: unknown) => (String(v).length > 120 ? `${String(v).slice(0, 120)}… (${String(v).length} chars)` : String(v));
          const headers = Object.entries(r?.headers ?? {}).map(([k, v]) => `  ${k}: ${cut(v)}`);
          throw new Error(
            `fuzz failed at run ${out.numRuns} (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} reproduces it):\n${r?.method} ${cut(r?.path)}\n${headers.join('\n')}\nbody: ${cut(r?.body)}\n${cut((out.errorInstance as Error)?.message ?? 'interrupted')}`,
          );
        },
      },
    );
    // The run reached the handlers, not only the front door.
    for (const code of ['200', 'unauthorized', 'invalid_token', 'route_not_found', 'invalid_json'])
      expect([...seen.keys()]).toContain(code);

    // The canary: still there, unchanged, owned by its user.
    const res = await send({
      method: 'GET',
      path: `/api/v1/db/canary?eq.id=${fx.canaryId}`,
      headers: { authorization: `Bearer ${SK}` },
      body: null,
    });
    expect(JSON.parse(res.body)).toEqual([{ id: fx.canaryId, owner: fx.canaryOwner, secret: MARKER }]);
    const all = await send({ method: 'GET', path: '/api/v1/db/canary', headers: { authorization: `Bearer ${SK}` }, body: null });
    expect(JSON.parse(all.body)).toHaveLength(1);
    const file = await send({
      method: 'GET',
      path: '/api/v1/storage/object/files/victim/secret.txt',
      headers: { authorization: `Bearer ${SK}` },
      body: null,
    });
    expect([file.status, file.body]).toEqual([200, MARKER]);

    // Memory: back near where it was after the warm-up (GC runs when it will: poll).
    const limit = baseline * 1.25 + 40;
    let rss = rssMiB(server.proc.pid ?? 0);
    for (let i = 0; i < 60 && rss > limit; i++) {
      await new Promise((r) => setTimeout(r, 500));
      rss = rssMiB(server.proc.pid ?? 0);
    }
    process.stdout.write(
      `fuzz: ${RUNS} requests (seed ${SEED}), 0 × 5xx; RSS ${Math.round(baseline)} MiB after warm-up, ${Math.round(rss)} MiB after; answers ${JSON.stringify(Object.fromEntries([...seen].sort((a, b) => b[1] - a[1])))}\n`,
    );
    expect(rss).toBeLessThanOrEqual(limit);
  }, 1_800_000);
});
