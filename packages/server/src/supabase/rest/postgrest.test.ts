import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { restClient } from '../../../test/supabase-rest.js';

// /rest/v1 through postgrest-js itself (the real npm client, its fetch handed to app.inject), on
// a schema of this test: every operator, select, embedding, headers, writes, functions, errors.
let t: TestServer;
let anon: ReturnType<typeof restClient>;
let service: ReturnType<typeof restClient>;
let user: ReturnType<typeof restClient>;
const OWNER = '44444444-4444-4444-8444-444444444444';

const SCHEMA = `
create table teams (id int primary key, name text not null unique);
create table people (
  id int primary key, name text not null, age int, team_id int references teams, mentor_id int references people,
  tags text[] not null default '{}', meta jsonb, span int4range, bio text, nick text,
  owner uuid
);
create table pets (id int primary key, name text not null, owner_id int not null references people, kind text not null default 'cat');
create table rivals (a int references people, b int references people, primary key (a, b));
create table secrets (id int primary key, body text);
create table notes (id serial primary key, body text not null, owner uuid not null default auth.uid());
grant select, insert, update, delete on teams, people, pets, rivals to anon, authenticated;
grant select, insert, update, delete on notes to authenticated;
grant usage on sequence notes_id_seq to authenticated;
revoke all on secrets from anon, authenticated;
create policy all_teams on teams for all using (true) with check (true);
create policy all_people on people for all using (true) with check (true);
create policy all_pets on pets for all using (true) with check (true);
create policy all_rivals on rivals for all using (true) with check (true);
create policy own_notes on notes for all using (owner = auth.uid()) with check (owner = auth.uid());
insert into teams values (1, 'red'), (2, 'blue'), (3, 'empty');
insert into people (id, name, age, team_id, mentor_id, tags, meta, span, bio, nick) values
  (1, 'Ada', 36, 1, null, '{math,code}', '{"city": "London", "langs": ["en"], "n": 1}', '[1,10)', 'The fat cats sat on mats', 'ada'),
  (2, 'Bob', 25, 1, 1, '{code}', '{"city": "Paris", "n": 2}', '[5,15)', 'Dogs and cats', null),
  (3, 'Cy', null, 2, 1, '{}', null, '[20,30)', 'Nothing here', 'cy'),
  (4, 'Dee', 52, null, 2, '{art,math}', '{"city": "London", "n": 3}', null, 'A cat, a hat', 'dee');
insert into pets values (1, 'Tom', 1, 'cat'), (2, 'Rex', 1, 'dog'), (3, 'Kit', 2, 'cat');
insert into rivals values (1, 2), (3, 4);
insert into secrets values (1, 'x');
create function add(a int, b int) returns int language sql immutable as 'select a + b';
create function people_older(min int) returns setof people language sql stable as 'select * from people where age > min';
create function touch(id int) returns void language sql as 'update people set bio = bio where id = touch.id';
create function echo(payload jsonb) returns jsonb language sql immutable as 'select payload';
create function fail_please() returns int language plpgsql as $$ begin raise exception 'nope' using detail = 'd', hint = 'h'; end $$;
grant execute on function add(int, int), people_older(int), touch(int), echo(jsonb), fail_please() to anon, authenticated;
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SCHEMA);
  expect(res.statusCode, res.body).toBe(200);
  anon = restClient(t, t.as.anon);
  service = restClient(t, t.as.service);
  user = restClient(t, t.as.user(await t.mintToken(OWNER)));
});
afterAll(() => t?.stop());

const peopleIds = () => anon.from('people').select('id');
const ids = (data: unknown) => (data as Array<{ id: number }>).map((r) => r.id).sort((a, b) => a - b);

describe('filters: every operator, not., any/all', () => {
  const cases: Array<
    [string, (q: ReturnType<typeof peopleIds>) => PromiseLike<{ data: unknown; error: unknown; status: number }>, number[]]
  > = [
    ['eq', (q) => q.eq('name', 'Ada'), [1]],
    ['neq', (q) => q.neq('name', 'Ada'), [2, 3, 4]],
    ['gt', (q) => q.gt('age', 30), [1, 4]],
    ['gte', (q) => q.gte('age', 36), [1, 4]],
    ['lt', (q) => q.lt('age', 30), [2]],
    ['lte', (q) => q.lte('age', 36), [1, 2]],
    ['like', (q) => q.like('name', '%d%'), [1]],
    ['ilike', (q) => q.ilike('name', 'a%'), [1]],
    ['match', (q) => q.match({ name: 'Bob' }), [2]],
    ['regex match', (q) => q.filter('name', 'match', '^[AB]'), [1, 2]],
    ['regex imatch', (q) => q.filter('name', 'imatch', '^[ab]'), [1, 2]],
    ['in', (q) => q.in('name', ['Ada', 'Cy', 'a,b']), [1, 3]],
    ['is null', (q) => q.is('age', null), [3]],
    ['not is null', (q) => q.not('age', 'is', null), [1, 2, 4]],
    ['isdistinct', (q) => q.filter('nick', 'isdistinct', 'ada'), [2, 3, 4]],
    ['fts (to_tsquery)', (q) => q.textSearch('bio', 'cat & hat', { config: 'english' }), [4]],
    ['plfts', (q) => q.textSearch('bio', 'fat cats', { type: 'plain', config: 'english' }), [1]],
    ['phfts', (q) => q.textSearch('bio', 'fat cats', { type: 'phrase', config: 'english' }), [1]],
    ['wfts', (q) => q.textSearch('bio', 'cats -dogs', { type: 'websearch', config: 'english' }), [1, 4]],
    ['cs (array)', (q) => q.contains('tags', ['math']), [1, 4]],
    ['cd (array)', (q) => q.containedBy('tags', ['code', 'math']), [1, 2, 3]],
    ['ov (array)', (q) => q.overlaps('tags', ['art', 'code']), [1, 2, 4]],
    ['cs (jsonb)', (q) => q.contains('meta', { city: 'London' }), [1, 4]],
    ['ov (range)', (q) => q.overlaps('span', '[8,9]'), [1, 2]],
    ['sl', (q) => q.rangeLt('span', '[15,16]'), [1, 2]],
    ['sr', (q) => q.rangeGt('span', '[0,4]'), [2, 3]],
    ['nxl', (q) => q.rangeGte('span', '[5,6]'), [2, 3]],
    ['nxr', (q) => q.rangeLte('span', '[0,15]'), [1, 2]],
    ['adj', (q) => q.rangeAdjacent('span', '[15,20)'), [2, 3]],
    ['not.eq', (q) => q.not('name', 'eq', 'Ada'), [2, 3, 4]],
    ['not.in', (q) => q.not('id', 'in', '(1,2)'), [3, 4]],
    ['eq(any)', (q) => q.filter('name', 'eq(any)', '{Ada,Cy}'), [1, 3]],
    ['like(all)', (q) => q.filter('name', 'like(all)', '{*e*,D*}'), [4]],
    ['gt(any) on numbers', (q) => q.filter('age', 'gt(any)', '{50,30}'), [1, 4]],
    ['JSON path ->>', (q) => q.eq('meta->>city', 'London'), [1, 4]],
    ['JSON path -> compared as json', (q) => q.gt('meta->n', 1), [2, 4]],
  ];
  for (const [name, apply, expected] of cases) {
    it(name, async () => {
      const { data, error, status } = await apply(peopleIds());
      expect(error).toBeNull();
      expect(status).toBe(200);
      expect(ids(data)).toEqual(expected);
    });
  }

  it('or=() and and=() nest, also with not. and on an embedded resource', async () => {
    const r1 = await anon.from('people').select('id').or('name.eq.Ada,not.and(age.lt.40,name.not.eq.Cy)');
    expect(r1.error).toBeNull();
    expect(ids(r1.data)).toEqual([1, 3, 4]);
    const r2 = await anon.from('people').select('id').or('age.is.null,tags.cs.{art},id.in.(2)');
    expect(r2.error).toBeNull();
    expect(ids(r2.data)).toEqual([2, 3, 4]);
    const r3 = await anon.from('people').select('id').not('age', 'is', null).or('name.like.*e*,name.eq."Bob"');
    expect(r3.error).toBeNull();
    expect(ids(r3.data)).toEqual([2, 4]);
    const r4 = await anon.from('people').select('id,pets(name)').or('kind.eq.dog,name.eq.Kit', { referencedTable: 'pets' }).eq('id', 1);
    expect(r4.data).toEqual([{ id: 1, pets: [{ name: 'Rex' }] }]);
  });

  it('a malformed filter is PGRST100 (400), never a 5xx', async () => {
    const r = await anon.from('people').select('id').filter('age', 'between', '1');
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe('PGRST100');
    const g = await anon.from('people').select('id').or('age.gt.1,(');
    expect(g.status).toBe(400);
    expect(g.error?.code).toBe('PGRST100');
  });
});

describe('select, embedding, order, paging', () => {
  it('aliases, casts and JSON paths', async () => {
    const { data } = await anon.from('people').select('key:id, age::text, city:meta->>city, n:meta->n').eq('id', 1);
    expect(data).toEqual([{ key: 1, age: '36', city: 'London', n: 1 }]);
  });

  it('embeds many-to-one, one-to-many, with hints, !inner and !left', async () => {
    const { data: d1 } = await anon.from('people').select('name, teams(name), pets(name)').eq('id', 1);
    expect(d1).toEqual([{ name: 'Ada', teams: { name: 'red' }, pets: [{ name: 'Tom' }, { name: 'Rex' }] }]);
    const { data: d2 } = await anon.from('people').select('name, mentor:mentor_id(name)').eq('id', 2);
    expect(d2).toEqual([{ name: 'Bob', mentor: { name: 'Ada' } }]);
    const { data: d3 } = await anon.from('teams').select('name, people!inner(name)').eq('people.name', 'Cy');
    expect(d3).toEqual([{ name: 'blue', people: [{ name: 'Cy' }] }]);
    const { data: d4 } = await anon.from('teams').select('id, people!left(id)').order('id');
    expect((d4 as Array<{ id: number }>).map((r) => r.id)).toEqual([1, 2, 3]);
    const { data: d5 } = await anon
      .from('rivals')
      .select('a, first:people!rivals_a_fkey(name), second:people!rivals_b_fkey(name)')
      .eq('a', 1);
    expect(d5).toEqual([{ a: 1, first: { name: 'Ada' }, second: { name: 'Bob' } }]);
  });

  it('order (also of an embedded resource), limit, offset, range and Content-Range', async () => {
    const { data, count } = await anon
      .from('people')
      .select('id, pets(name)', { count: 'exact' })
      .order('age', { ascending: false, nullsFirst: true })
      .order('name', { referencedTable: 'pets' })
      .limit(1, { referencedTable: 'pets' })
      .range(0, 1);
    expect(count).toBe(4);
    expect(data).toEqual([
      { id: 3, pets: [] },
      { id: 4, pets: [] },
    ]);
    const page = await anon.from('people').select('id').order('id').limit(2).range(1, 2);
    expect(ids(page.data)).toEqual([2, 3]);
    const res = await t.app.inject({
      url: '/rest/v1/people?select=id&order=id',
      headers: { ...t.as.anon, range: '1-2', prefer: 'count=exact' },
    });
    expect(res.json()).toEqual([{ id: 2 }, { id: 3 }]);
    expect(res.headers['content-range']).toBe('1-2/4');
    // Fewer rows than the known total: 206 Partial Content, as PostgREST answers.
    expect(res.statusCode).toBe(206);
  });

  it("count=planned is the planner's estimate of the filtered rows, count=estimated the exact count below db-max-rows", async () => {
    await t.sql(
      'create table est (id int primary key, k int); insert into est select g, g % 10 from generate_series(1, 2000) g; analyze est; grant select on est to anon; create policy est_all on est for select using (true);',
    );
    const listed = await t.app.inject({ url: '/rest/v1/est?select=*', headers: { ...t.as.anon, prefer: 'count=planned' } });
    expect(listed.statusCode, listed.body.slice(0, 300)).toBe(206);
    const planned = await anon.from('est').select('*', { count: 'planned', head: true });
    expect(planned.error).toBeNull();
    // After ANALYZE the estimate of the whole table is its size; of one k, about a tenth.
    expect(planned.count).toBe(2000);
    const filtered = await anon.from('est').select('*', { count: 'planned', head: true }).eq('k', 3);
    expect(filtered.count).toBeGreaterThan(100);
    expect(filtered.count).toBeLessThan(400);
    const small = await anon.from('people').select('*', { count: 'estimated', head: true });
    expect([small.count, small.status]).toEqual([4, 200]);
    const limited = await anon.from('est').select('id', { count: 'planned' }).limit(5);
    expect(limited.status).toBe(206);
    expect(limited.data).toHaveLength(5);
  });

  it('an embedding replaces the column * gave its key; a bare count in an embedding is count()', async () => {
    const { data } = await anon.from('people').select('*, mentor_id(name)').eq('id', 2).single();
    expect((data as Record<string, unknown>).mentor_id).toEqual({ name: 'Ada' });
    const counted = await anon.from('people').select('name, pets(count)').eq('id', 1);
    expect(counted.data).toEqual([{ name: 'Ada', pets: [{ count: 2 }] }]);
  });

  it('HEAD with count=exact: the count, no body', async () => {
    const { data, count, status } = await anon.from('people').select('*', { count: 'exact', head: true }).gt('age', 30);
    expect([data, count, status]).toEqual([null, 2, 200]);
  });

  it('single(), maybeSingle() and PGRST116', async () => {
    expect((await anon.from('people').select('name').eq('id', 2).single()).data).toEqual({ name: 'Bob' });
    expect((await anon.from('people').select('name').eq('id', 99).maybeSingle()).data).toBeNull();
    const many = await anon.from('people').select('name').single();
    expect(many.status).toBe(406);
    expect(many.error).toEqual({
      code: 'PGRST116',
      details: 'The result contains 4 rows',
      hint: null,
      message: 'Cannot coerce the result to a single JSON object',
    });
  });

  it('nulls=stripped leaves out null-valued keys', async () => {
    const res = await t.app.inject({
      url: '/rest/v1/people?select=id,nick,age&id=in.(2,3)&order=id',
      headers: { ...t.as.anon, accept: 'application/vnd.pgrst.array+json;nulls=stripped' },
    });
    expect(res.json()).toEqual([
      { id: 2, age: 25 },
      { id: 3, nick: 'cy' },
    ]);
  });

  it('CSV', async () => {
    const { data } = await anon.from('people').select('id,name,bio').in('id', [1, 4]).order('id').csv();
    // PostgREST's CSV is each row's record text: white space quotes a value too.
    expect(data).toBe('id,name,bio\n1,Ada,"The fat cats sat on mats"\n4,Dee,"A cat, a hat"');
    const typed = await anon.from('people').select('id,meta,tags,nick').eq('id', 2).csv();
    expect(typed.data).toBe('id,meta,tags,nick\n2,"{""n"": 2, ""city"": ""Paris""}","[""code""]",');
  });

  it('Accept-Profile / Content-Profile: public, another schema is PGRST106', async () => {
    expect((await restClient(t, t.as.anon, 'public').from('teams').select('id').eq('id', 1)).data).toEqual([{ id: 1 }]);
    const other = await restClient(t, t.as.anon, 'personal').from('teams').select('id');
    expect(other.status).toBe(406);
    expect(other.error).toEqual({
      code: 'PGRST106',
      message: 'The schema must be one of the following: public',
      details: null,
      hint: null,
    });
  });
});

describe('writes and Prefer', () => {
  it('insert: minimal by default (201, no body), representation with select(), count', async () => {
    const r1 = await anon.from('teams').insert({ id: 10, name: 'ten' });
    expect([r1.status, r1.data, r1.error]).toEqual([201, null, null]);
    const r2 = await anon
      .from('teams')
      .insert(
        [
          { id: 11, name: 'eleven' },
          { id: 12, name: 'twelve' },
        ],
        { count: 'exact' },
      )
      .select();
    expect(r2.status).toBe(201);
    expect(r2.count).toBe(2);
    expect(r2.data).toEqual([
      { id: 11, name: 'eleven' },
      { id: 12, name: 'twelve' },
    ]);
    const r3 = await anon.from('teams').insert({ id: 13, name: 'thirteen' }).select('id, people(id)').single();
    expect(r3.data).toEqual({ id: 13, people: [] });
  });

  it('insert with columns=, upsert merge / ignore with on_conflict', async () => {
    const c = await anon
      .from('teams')
      .insert([{ id: 20, name: 'x', extra: 'ignored' }] as never, { defaultToNull: false })
      .select();
    expect(c.error?.code).toBe('PGRST204');
    const withColumns = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/teams?columns=id,name',
      headers: { ...t.as.anon, prefer: 'return=representation' },
      payload: [{ id: 21, name: 'cols', extra: 1 }],
    });
    expect(withColumns.statusCode).toBe(201);
    expect(withColumns.json()).toEqual([{ id: 21, name: 'cols' }]);
    const merged = await anon.from('teams').upsert({ id: 21, name: 'merged' }).select();
    expect(merged.data).toEqual([{ id: 21, name: 'merged' }]);
    const ignored = await anon.from('teams').upsert({ id: 99, name: 'merged' }, { onConflict: 'name', ignoreDuplicates: true }).select();
    expect(ignored.data).toEqual([]);
  });

  it('update and delete with filters, representation and minimal', async () => {
    const u = await anon.from('teams').update({ name: 'ten!' }).eq('id', 10).select();
    expect(u.data).toEqual([{ id: 10, name: 'ten!' }]);
    const minimal = await anon.from('teams').update({ name: 'ten?' }).eq('id', 10);
    expect([minimal.status, minimal.data]).toEqual([204, null]);
    const d = await anon.from('teams').delete().in('id', [11, 12]).select('id');
    expect(ids(d.data)).toEqual([11, 12]);
    const whole = await anon.from('teams').delete();
    expect(whole.status).toBe(400);
    expect(whole.error?.message).toBe('DELETE requires a WHERE clause');
  });

  it('PUT upserts the row its primary-key filter names', async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/rest/v1/teams?id=eq.30',
      headers: { ...t.as.anon, prefer: 'return=representation' },
      payload: { id: 30, name: 'put' },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual([{ id: 30, name: 'put' }]);
    const bad = await t.app.inject({ method: 'PUT', url: '/rest/v1/teams?name=eq.x', headers: t.as.anon, payload: { id: 31, name: 'x' } });
    expect(bad.statusCode).toBe(405);
    expect(bad.json().code).toBe('PGRST105');
  });

  it('Prefer: tx=rollback answers as the write would and keeps nothing', async () => {
    const ins = await anon.from('teams').insert({ id: 50, name: 'gone' }).select().rollback();
    expect(ins.error).toBeNull();
    expect([ins.status, ins.data]).toEqual([201, [{ id: 50, name: 'gone' }]]);
    const upd = await anon.from('people').update({ name: 'Zed' }).eq('id', 1).select('name').rollback();
    expect(upd.data).toEqual([{ name: 'Zed' }]);
    const del = await anon.from('pets').delete().eq('id', 3).rollback();
    expect(del.status).toBe(204);
    expect((await anon.from('teams').select('id').eq('id', 50)).data).toEqual([]);
    expect((await anon.from('people').select('name').eq('id', 1)).data).toEqual([{ name: 'Ada' }]);
    expect((await anon.from('pets').select('id').eq('id', 3)).data).toEqual([{ id: 3 }]);
    const refused = await anon.from('teams').insert({ id: 1, name: 'dup' }).rollback();
    expect(refused.error?.code).toBe('23505');
  });

  it('Prefer: handling=strict, max-affected=n: more rows changed is PGRST124 and nothing kept', async () => {
    // postgrest-js types maxAffected() for PostgREST 13 only: the headers it sends, by hand.
    const patch = (filter: string, kind: string) =>
      t.app.inject({
        method: 'PATCH',
        url: `/rest/v1/pets?${filter}`,
        headers: { ...t.as.anon, prefer: 'handling=strict, max-affected=1' },
        payload: { kind },
      });
    const over = await patch('owner_id=eq.1', 'bird');
    expect(over.statusCode).toBe(400);
    expect(over.json().code).toBe('PGRST124');
    expect((await anon.from('pets').select('kind').eq('owner_id', 1).order('id')).data).toEqual([{ kind: 'cat' }, { kind: 'dog' }]);
    const within = await patch('id=eq.3', 'cat');
    expect(within.statusCode).toBe(204);
    expect(within.headers['preference-applied']).toBe('handling=strict, max-affected=1');
  });

  it('Preference-Applied names what was honoured', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/teams',
      headers: { ...t.as.anon, prefer: 'return=representation, count=exact, resolution=merge-duplicates' },
      payload: { id: 40, name: 'forty' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['preference-applied']).toBe('return=representation, count=exact, resolution=merge-duplicates');
  });

  it('row-level security as the caller: a user writes and reads only their own notes', async () => {
    const mine = await user.from('notes').insert({ body: 'mine' }).select('body, owner').single();
    expect(mine.data).toEqual({ body: 'mine', owner: OWNER });
    await t.sql(`insert into notes (body, owner) values ('theirs', '${'5'.repeat(8)}-5555-4555-8555-${'5'.repeat(12)}')`);
    expect((await user.from('notes').select('body')).data).toEqual([{ body: 'mine' }]);
    expect((await service.from('notes').select('body', { count: 'exact', head: true })).count).toBe(2);
  });
});

describe('functions', () => {
  it('POST and GET with arguments, a set with filters and order, void, HEAD', async () => {
    expect((await anon.rpc('add', { a: 2, b: 3 })).data).toBe(5);
    expect((await anon.rpc('add', { a: 2, b: 3 }, { get: true })).data).toBe(5);
    const older = await anon.rpc('people_older', { min: 20 }).select('name').lt('age', 50).order('name', { ascending: false });
    expect(older.data).toEqual([{ name: 'Bob' }, { name: 'Ada' }]);
    const counted = await anon.rpc('people_older', { min: 20 }, { head: true, count: 'exact' });
    expect([counted.data, counted.count]).toEqual([null, 3]);
    const v = await anon.rpc('touch', { id: 1 });
    expect([v.status, v.data, v.error]).toEqual([204, null, null]);
    expect((await anon.rpc('echo', { payload: { a: [1] } })).data).toEqual({ a: [1] });
    const one = await anon.rpc('people_older', { min: 40 }).select('name').single();
    expect(one.data).toEqual({ name: 'Dee' });
  });

  it("errors: PGRST202 for an unknown function, a function's raise as its SQLSTATE with detail and hint", async () => {
    const missing = await anon.rpc('nope' as never, {});
    expect(missing.status).toBe(404);
    expect(missing.error).toEqual({
      code: 'PGRST202',
      message: 'Could not find the function public.nope without parameters in the schema cache',
      details:
        'Searched for the function public.nope without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: null,
    });
    const raised = await anon.rpc('fail_please');
    expect(raised.status).toBe(400);
    expect(raised.error).toEqual({ code: 'P0001', message: 'nope', details: 'd', hint: 'h' });
  });
});

describe("PostgREST's errors", () => {
  it('23505 with PostgreSQL message, 409', async () => {
    const r = await anon.from('teams').insert({ id: 1, name: 'again' });
    expect(r.status).toBe(409);
    expect(r.error?.code).toBe('23505');
    expect(r.error?.message).toBe('duplicate key value violates unique constraint "teams_pkey"');
  });

  it('42703 for an unknown column, PGRST205 for an unknown table, PGRST200 and PGRST201 for embeddings', async () => {
    expect((await anon.from('people').select('missing')).error).toEqual({
      code: '42703',
      message: 'column people.missing does not exist',
      details: null,
      hint: null,
    });
    const table = await anon.from('peeple' as never).select();
    expect(table.status).toBe(404);
    expect(table.error?.code).toBe('PGRST205');
    const rel = await anon.from('teams').select('pets(name)');
    expect(rel.status).toBe(400);
    expect(rel.error).toEqual({
      code: 'PGRST200',
      message: "Could not find a relationship between 'teams' and 'pets' in the schema cache",
      details: "Searched for a foreign key relationship between 'teams' and 'pets' in the schema 'public', but no matches were found.",
      hint: null,
    });
    const ambiguous = await anon.from('rivals').select('people(name)');
    expect(ambiguous.status).toBe(300);
    expect(ambiguous.error?.code).toBe('PGRST201');
    expect(ambiguous.error?.details).toContainEqual({
      cardinality: 'many-to-one',
      embedding: 'rivals with people',
      relationship: 'rivals_a_fkey using rivals(a) and people(id)',
    });
    const oneToMany = await anon.from('people').select('rivals(a)');
    expect(oneToMany.error?.details).toContainEqual({
      cardinality: 'one-to-many',
      embedding: 'people with rivals',
      relationship: 'rivals_a_fkey using people(id) and rivals(a)',
    });
  });

  it("in an embedded relation the unknown column is named by PostgREST's alias; one relation twice is 42712", async () => {
    const inner = await anon.from('people').select('name, pets(nope)');
    expect(inner.status).toBe(400);
    expect(inner.error).toMatchObject({ code: '42703', message: 'column pets_1.nope does not exist' });
    const twice = await anon.from('rivals').select('people!a(name), people!b(name)');
    expect(twice.status).toBe(400);
    expect(twice.error).toEqual({
      code: '42712',
      message: 'table name "rivals_people_1" specified more than once',
      details: null,
      hint: null,
    });
  });

  it('an aggregate takes a cast: id.count()::text', async () => {
    const { data, error } = await anon.from('pets').select('owner_id, n:id.count()::text').order('owner_id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { owner_id: 1, n: '2' },
      { owner_id: 2, n: '1' },
    ]);
    const bad = await anon.from('pets').select('n:id.count()::text;drop');
    expect(bad.status).toBe(400);
  });

  it('42501 without a privilege: 401 for anon, 403 for a user', async () => {
    const a = await anon.from('secrets').select();
    expect(a.status).toBe(401);
    expect(a.error).toMatchObject({ code: '42501', message: 'permission denied for table secrets' });
    const u = await user.from('secrets').select();
    expect(u.status).toBe(403);
  });

  it('no key: 401', async () => {
    const res = await t.app.inject({ url: '/rest/v1/teams' });
    expect(res.statusCode).toBe(401);
    expect(Object.keys(res.json()).sort()).toEqual(['code', 'details', 'hint', 'message']);
  });
});

describe('GET /rest/v1/', () => {
  it('answers a Swagger 2.0 document of what the caller may use', async () => {
    const res = await t.app.inject({ url: '/rest/v1/', headers: t.as.anon });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.swagger).toBe('2.0');
    expect(Object.keys(doc.definitions)).toContain('people');
    expect(Object.keys(doc.definitions)).not.toContain('secrets');
    expect(Object.keys(doc.paths)).toContain('/rpc/add');
  });
});
