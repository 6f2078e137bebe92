import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type DbErrorKind, dbErrorAnswer, dbErrorKind } from './errors.js';
import { DbError } from './types.js';

// One table turns a database error into the API's answer (errors.ts). These tests hold it to
// that: first the table itself, then every area that writes to the database, each made to
// meet the same error by a trigger of the project's, answering alike.

describe('dbErrorKind: what a SQLSTATE means', () => {
  const cases: Array<[string, string, DbErrorKind]> = [
    ['23505', 'duplicate key value violates unique constraint', 'unique_violation'],
    ['23502', 'null value in column', 'not_null_violation'],
    ['23000', 'integrity', 'integrity_violation'],
    ['42501', 'new row violates row-level security policy for table "t"', 'rls_violation'],
    ['42501', 'permission denied for table t', 'insufficient_privilege'],
    ['42601', 'syntax error in tsquery: "a & & b"', 'value_syntax'],
    // The text-search parsers' other words for a malformed value, and jsonpath's and ltree's.
    ['42601', 'no operand in tsquery: "!"', 'value_syntax'],
    ['42601', 'wrong position info in tsvector: "a:0"', 'value_syntax'],
    ['42601', 'there is no escaped character: "a\\"', 'value_syntax'],
    ['42601', 'syntax error at end of jsonpath input', 'value_syntax'],
    ['42601', 'lquery syntax error at character 3', 'value_syntax'],
    ['42704', 'text search configuration "klingon" does not exist', 'undefined_text_search_config'],
    ['42704', 'type "nope" does not exist', 'statement_refused'],
    ['42803', 'column "posts.title" must appear in the GROUP BY clause', 'grouping_error'],
    ['42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification', 'invalid_conflict_target'],
    ['21000', 'ON CONFLICT DO UPDATE command cannot affect row a second time', 'cardinality_violation'],
    ['42601', 'syntax error at or near "selec"', 'syntax_error'],
    ['22P05', 'unsupported Unicode escape sequence', 'nul_in_text'],
    ['22023', 'invalid parameter value', 'invalid_value'],
    ['P0001', 'my message', 'raised'],
    ['U0A42', 'my message', 'raised'],
    ['40P01', 'deadlock detected', 'concurrent_change'],
    ['08006', 'connection failure', 'connection_failure'],
    ['57P01', 'terminating connection due to administrator command', 'connection_failure'],
    ['28P01', 'password authentication failed', 'login_refused'],
    ['3D000', 'database "x" does not exist', 'unknown_database'],
    ['42P17', 'infinite recursion detected in policy', 'statement_refused'],
    ['XX000', 'internal', 'internal'],
    ['58030', 'could not write', 'internal'],
  ];
  it.each(cases)('%s (%s) is %s', (state, message, kind) => {
    expect(dbErrorKind(new DbError(message, state))).toBe(kind);
    // The driver's own error object (before it is a DbError) reads the same.
    expect(dbErrorKind(Object.assign(new Error(message), { code: state }))).toBe(kind);
  });

  it('is null for what is not a database error, Node errno codes included', () => {
    expect(dbErrorKind(new Error('x'))).toBeNull();
    expect(dbErrorKind(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeNull();
    expect(dbErrorKind(null)).toBeNull();
  });
});

describe('dbErrorAnswer: the one table', () => {
  const todos = { relation: { name: 'todos', kind: 'table' as const }, writes: true };
  it('answers what a request can cause with a 4xx and details.sqlstate, the relation named where it matters', () => {
    expect(dbErrorAnswer(new DbError('dup', '23505', undefined, 'todos_pkey'), todos)).toEqual({
      code: 'conflict',
      message: 'A row with the same unique value already exists.',
      details: { constraint: 'todos_pkey', sqlstate: '23505' },
    });
    expect(dbErrorAnswer(new DbError('rls', '42501'), todos)?.code).toBe('permission_denied');
    expect(dbErrorAnswer(new DbError('new row violates row-level security policy', '42501'), todos)?.details).toEqual({
      table: 'todos',
      sqlstate: '42501',
    });
    expect(dbErrorAnswer(new DbError('oom', '53200'))).toMatchObject({ code: 'database_unavailable', retryAfter: 1 });
  });

  it('carries the column of a not-null or check violation (the console highlights the field)', () => {
    const notNull = new DbError('null value', '23502', undefined, undefined, undefined, 'title', 'todos');
    expect(dbErrorAnswer(notNull, todos)?.details).toEqual({ constraint: null, column: 'title', sqlstate: '23502' });
    const check = new DbError('check', '23514', undefined, 'todos_title_check', undefined, 'title');
    expect(dbErrorAnswer(check, todos)?.details).toEqual({ constraint: 'todos_title_check', column: 'title', sqlstate: '23514' });
  });

  it("sends a raise's own message, detail and hint, and only those", () => {
    expect(dbErrorAnswer(new DbError('no more seats', 'U0A42', 'row 3'))).toEqual({
      code: 'raised_exception',
      message: 'no more seats',
      details: { sqlstate: 'U0A42', detail: 'row 3' },
    });
    const hinted = new DbError('Refused', 'P0001', 'the detail', undefined, undefined, undefined, undefined, 'the hint');
    expect(dbErrorAnswer(hinted)?.details).toEqual({ sqlstate: 'P0001', detail: 'the detail', hint: 'the hint' });
    expect(dbErrorAnswer(new DbError('relation "secret_table" …', '22023'))?.message).not.toContain('secret_table');
  });

  it("maps an area's own constraints by name, and no other error of the same SQLSTATE", () => {
    const own = { constraints: { buckets_pkey: ['bucket_exists', 'A bucket "b" already exists.'] as const } };
    expect(dbErrorAnswer(new DbError('dup', '23505', undefined, 'buckets_pkey'), own)?.code).toBe('bucket_exists');
    expect(dbErrorAnswer(new DbError('dup', '23505', undefined, 'other_key'), own)?.code).toBe('conflict');
    expect(dbErrorAnswer(new DbError('dup', '23505'), own)?.code).toBe('conflict');
  });

  it('answers what a REST query shapes: a bad text-search value or configuration, grouping, on_conflict, a row changed twice', () => {
    const cases: Array<[string, string, string]> = [
      ['42601', 'syntax error in tsvector: "a:"', 'invalid_value'],
      ['42704', 'text search configuration "klingon" does not exist', 'invalid_value'],
      ['42803', 'column "t.x" must appear in the GROUP BY clause', 'invalid_parameter'],
      ['42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification', 'invalid_parameter'],
      ['21000', 'ON CONFLICT DO UPDATE command cannot affect row a second time', 'invalid_request'],
      ['42704', 'type "nope" does not exist', 'invalid_request'],
    ];
    for (const [state, message, code] of cases) expect(dbErrorAnswer(new DbError(message, state), todos)?.code, message).toBe(code);
    // Without a project relation the statement is Plinth's own: grouping and on_conflict there are bugs.
    for (const state of ['42803', '42P10', '21000']) expect(dbErrorAnswer(new DbError('x', state)), state).toBeNull();
  });

  describe("a call of the project's function (RPC)", () => {
    const add = { function: 'add' };
    it('names the function, and the grant that opens a closed one', () => {
      const closed = dbErrorAnswer(new DbError('permission denied for function add', '42501'), add);
      expect(closed).toEqual({
        code: 'permission_denied',
        message: expect.stringContaining('grant execute on function add to authenticated'),
        details: { function: 'add', sqlstate: '42501' },
      });
      // Another function it calls, or a table it reads, is denied: no grant hint for the wrong one.
      for (const message of ['permission denied for function helper', 'permission denied for table secrets']) {
        expect(dbErrorAnswer(new DbError(message, '42501'), add)).toEqual({
          code: 'permission_denied',
          message: 'Your role lacks the privilege for this operation.',
          details: { function: 'add', sqlstate: '42501' },
        });
      }
      expect(dbErrorAnswer(new DbError('new row violates row-level security policy for table "t"', '42501'), add)?.details).toEqual({
        function: 'add',
        sqlstate: '42501',
      });
    });

    it('answers 400 for what the function does wrong, never 405 (nothing is written through a function)', () => {
      for (const state of ['42P01', '42P17', '42704', '42809', '55000', '0A000', '42P10']) {
        const answer = dbErrorAnswer(new DbError('x', state), add);
        expect(answer?.code, state).toBe('invalid_request');
        expect(answer?.message, state).toContain('"add"');
      }
      expect(dbErrorAnswer(new DbError('x', 'P0002'), add)?.message).toBe('The function "add" failed on this request (SQLSTATE P0002).');
      expect(dbErrorAnswer(new DbError('x', '42703'), add)?.code).toBe('column_not_found');
      // Its value errors and raises answer as anywhere.
      expect(dbErrorAnswer(new DbError('x', '22P02'), add)?.code).toBe('invalid_value');
      expect(dbErrorAnswer(new DbError('no', 'P0001'), add)?.code).toBe('raised_exception');
      // A server fault stays a 500.
      for (const state of ['XX000', '58030']) expect(dbErrorAnswer(new DbError('x', state), add), state).toBeNull();
    });
  });

  it("is null (a logged 500) for the server's faults, and for a wrong statement of Plinth's own", () => {
    for (const state of ['XX000', '58030', '39P01', '42601']) expect(dbErrorAnswer(new DbError('x', state), todos), state).toBeNull();
    // Without a project relation, the statement is Plinth's own: an unknown column there is a bug.
    for (const state of ['42703', '42P01', '42P17', '42501', 'P0002']) {
      expect(dbErrorAnswer(new DbError('x', state)), state).toBeNull();
      expect(dbErrorAnswer(new DbError('x', state), todos), state).not.toBeNull();
    }
  });
});

// The same error, raised by the project's trigger in each area's own write: the REST API, an
// upload (storage.objects, under the project's policies), a bucket, a sign-up and a user made
// by an admin (both auth.users). A trigger of the project's on auth.users is common (a profile
// row made for each new user); its refusal reaches the client the same way from every door.
describe('every area answers the same for the same database error', () => {
  let t: TestServer;
  let n = 0;
  const next = () => ++n;

  beforeAll(async () => {
    t = await createTestServer();
    await t.db.query(`create table public.raise_next (code text not null, msg text)`);
    await t.db.query(`create function public.raise_next() returns trigger language plpgsql security definer set search_path = public as $$
      declare r record;
      begin
        select code, msg into r from public.raise_next limit 1;
        if found then raise exception using errcode = r.code, message = coalesce(r.msg, 'raised ' || r.code); end if;
        return new;
      end $$`);
    await t.db.query('grant execute on function public.raise_next() to plinth_sql');
    await t.db.query('create table public.things (id serial primary key, name text)');
    for (const table of ['public.things', 'storage.buckets', 'auth.users']) {
      await t.db.query(`create trigger raise_next before insert on ${table} for each row execute function public.raise_next()`);
    }
    // storage.objects belongs to the SQL runner's role (so projects write its policies there).
    const res = await t.sql('create trigger raise_next before insert on storage.objects for each row execute function public.raise_next()');
    expect(res.statusCode, res.body).toBe(200);
    const bucket = await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: t.as.service,
      payload: { name: 'files' },
    });
    expect(bucket.statusCode, bucket.body).toBe(201);
  });
  afterAll(() => t?.stop());

  const AREAS = {
    rest: () => t.app.inject({ method: 'POST', url: '/api/v1/db/things', headers: t.as.service, payload: { name: 'x' } }),
    storage: () =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/storage/object/files/f${next()}.txt`,
        headers: { ...t.as.service, 'content-type': 'text/plain' },
        payload: 'hello',
      }),
    buckets: () => t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: `b${next()}` } }),
    auth: () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/auth/signup',
        headers: t.as.anon,
        payload: { email: `u${next()}@example.com`, password: 'correct horse battery' },
      }),
    admin: () =>
      t.app.inject({ method: 'POST', url: '/api/v1/users', headers: t.as.service, payload: { email: `a${next()}@example.com` } }),
  };
  type Area = keyof typeof AREAS;
  const ALL = Object.keys(AREAS) as Area[];
  /** Where the statement runs on the project's relation (so a refused statement is the request's). */
  const OWN_RELATION: Area[] = ['rest', 'storage'];

  type Answer = { status: number; code: string; message: string; details?: Record<string, unknown> };
  async function answers(code: string, msg: string | null) {
    await t.db.query('delete from public.raise_next');
    await t.db.query('insert into public.raise_next (code, msg) values ($1, $2)', [code, msg]);
    const out: Partial<Record<Area, Answer>> = {};
    for (const area of ALL) {
      const res = await AREAS[area]();
      out[area] = { status: res.statusCode, ...(res.json() as Omit<Answer, 'status'>) };
    }
    await t.db.query('delete from public.raise_next');
    return out as Record<Area, Answer>;
  }

  // SQLSTATE (raised by the trigger), the status and code every area answers.
  const SAME: Array<[string, string | null, number, string]> = [
    ['U0A42', 'no more seats', 400, 'raised_exception'],
    ['P0001', 'not on Sundays', 400, 'raised_exception'],
    ['22023', null, 400, 'invalid_value'],
    ['23000', null, 400, 'constraint_violation'],
    ['23505', null, 409, 'conflict'],
    ['23514', null, 400, 'constraint_violation'],
    ['40001', null, 409, 'conflict'],
    ['55P03', null, 409, 'conflict'],
    ['57014', null, 400, 'statement_timeout'],
    ['25006', null, 405, 'method_not_allowed'],
    ['53200', null, 503, 'database_unavailable'],
    ['XX000', null, 500, 'internal_error'],
  ];
  it.each(SAME)('SQLSTATE %s (%s): every area answers %i %s, with the same message and details', async (state, msg, status, code) => {
    const got = await answers(state, msg);
    for (const area of ALL) {
      expect([area, got[area].status, got[area].code]).toEqual([area, status, code]);
      expect({ area, message: got[area].message, details: got[area].details }).toEqual({
        area,
        message: got.rest.message,
        details: got.rest.details,
      });
    }
    if (msg) expect(got.rest.message).toBe(msg);
    if (status < 500) expect(got.rest.details?.sqlstate).toBe(state);
  });

  // A refused statement (a recursive policy, a failing function of the project's) is the
  // request's where it runs on the project's relation; in Plinth's own statements on its own
  // tables it is a fault, logged, and a 500 with the one error shape.
  it.each([['42P17'], ['P0002']])('SQLSTATE %s: 400 where the project relation is at stake, else 500', async (state) => {
    const got = await answers(state, null);
    for (const area of ALL) {
      const want = OWN_RELATION.includes(area) ? [400, 'invalid_request'] : [500, 'internal_error'];
      expect([area, got[area].status, got[area].code]).toEqual([area, ...want]);
    }
  });

  it('each area still says what its own constraints mean', async () => {
    await t.db.query('delete from public.raise_next');
    const dup = await t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: 'files' } });
    expect([dup.statusCode, dup.json().code]).toEqual([409, 'bucket_exists']);
    const path = `/api/v1/storage/object/files/same-${next()}.txt`;
    const up = () => t.app.inject({ method: 'POST', url: path, headers: { ...t.as.service, 'content-type': 'text/plain' }, payload: 'x' });
    expect((await up()).statusCode).toBe(201);
    const again = await up();
    expect([again.statusCode, again.json().code]).toEqual([409, 'object_exists']);
    const email = `taken${next()}@example.com`;
    const make = () => t.app.inject({ method: 'POST', url: '/api/v1/users', headers: t.as.service, payload: { email } });
    expect((await make()).statusCode).toBe(201);
    const taken = await make();
    expect([taken.statusCode, taken.json().code]).toEqual([409, 'email_exists']);
  });
});
