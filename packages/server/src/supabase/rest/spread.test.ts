import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { restClient } from '../../../test/supabase-rest.js';

// Spreads (`...author(name)`) on both faces, one planner: a to-one relation's keys join the
// parent's object, a to-many relation's keys become arrays of its rows' values; RLS as the caller.
let t: TestServer;
let anon: ReturnType<typeof restClient>;

const SCHEMA = `
create table sp_teams (id int primary key, name text not null, city text);
create table sp_people (id int primary key, name text not null, team_id int references sp_teams);
create table sp_pets (id int primary key, name text not null, owner_id int not null references sp_people, hidden boolean not null default false);
grant select on sp_teams, sp_people, sp_pets to anon;
create policy t_all on sp_teams for select using (true);
create policy p_all on sp_people for select using (true);
create policy pets_visible on sp_pets for select using (not hidden);
insert into sp_teams values (1, 'red', 'Oslo'), (2, 'blue', null);
insert into sp_people values (1, 'Ada', 1), (2, 'Bob', 2), (3, 'Cy', null), (4, 'Dee', 1);
insert into sp_pets values (1, 'Tom', 1, false), (2, 'Rex', 1, false), (3, 'Kit', 2, true);
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SCHEMA);
  expect(res.statusCode, res.body).toBe(200);
  anon = restClient(t, t.as.anon);
});
afterAll(() => t?.stop());

const api = (query: string) => t.app.inject({ url: `/api/v1/db/${query}`, headers: t.as.anon });

describe('spreads on /rest/v1 (postgrest-js)', () => {
  it('a to-one spread puts the related columns in the parent row, null when there is no related row', async () => {
    const { data, error } = await anon.from('sp_people').select('id, ...sp_teams(team:name, city)').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, team: 'red', city: 'Oslo' },
      { id: 2, team: 'blue', city: null },
      { id: 3, team: null, city: null },
      { id: 4, team: 'red', city: 'Oslo' },
    ]);
  });

  it('a to-many spread gives one array per key, in the relation order, without the rows RLS hides', async () => {
    const { data, error } = await anon
      .from('sp_people')
      .select('id, ...sp_pets(pet:name, pet_id:id)')
      .in('id', [1, 2])
      .order('id')
      .order('id', { referencedTable: 'sp_pets', ascending: false });
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, pet: ['Rex', 'Tom'], pet_id: [2, 1] },
      { id: 2, pet: [], pet_id: [] },
    ]);
  });

  it('spreads nest inside an embedding, and group with the aggregates of their level', async () => {
    const nested = await anon.from('sp_pets').select('name, sp_people(name, ...sp_teams(team:name))').eq('id', 1).single();
    expect(nested.data).toEqual({ name: 'Tom', sp_people: { name: 'Ada', team: 'red' } });
    const grouped = await anon.from('sp_people').select('count(), ...sp_teams(team:name)');
    expect(grouped.error).toBeNull();
    const byTeam = (a: { team: string | null }, b: { team: string | null }) => String(a.team).localeCompare(String(b.team));
    expect([...(grouped.data ?? [])].sort(byTeam)).toEqual(
      [
        { count: 1, team: 'blue' },
        { count: 2, team: 'red' },
        { count: 1, team: null },
      ].sort(byTeam),
    );
  });

  it("a to-one spread's aggregates aggregate the parent's rows, grouped by its other keys (PostgREST's hoisting)", async () => {
    // Pets by their owner's team: the team's name groups, the owner's id is counted and summed.
    const byTeam = await anon.from('sp_pets').select('n:count(), ...sp_people(owners:id.count(), id_sum:id.sum(), team_id)');
    expect(byTeam.error).toBeNull();
    // Kit is hidden by its policy: Tom and Rex, both Ada's (team 1).
    expect(byTeam.data).toEqual([{ n: 2, owners: 2, id_sum: 2, team_id: 1 }]);
    // Inside a to-one embedding, over its one row (postgrest-js's own case).
    const nested = await anon
      .from('sp_pets')
      .select('name, sp_people(id.sum(), ...sp_teams(team_id_sum:id.sum(), team:name))')
      .eq('id', 1)
      .single();
    expect(nested.error).toBeNull();
    expect(nested.data).toEqual({ name: 'Tom', sp_people: { sum: 1, team_id_sum: 1, team: 'red' } });
  });

  it('a spread key that clashes with a parent key, or an aliased spread, is a 400, not a 5xx', async () => {
    const clash = await anon.from('sp_people').select('name, ...sp_teams(name)');
    expect(clash.status).toBe(400);
    const aliased = await t.app.inject({ url: '/rest/v1/sp_people?select=id,...x:sp_teams(name)', headers: t.as.anon });
    expect(aliased.statusCode).toBe(400);
    // A to-many spread's aggregate: refused, not guessed.
    const aggregate = await anon.from('sp_people').select('id, ...sp_pets(count())');
    expect(aggregate.status).toBe(400);
  });
});

describe('spreads on /api/v1/db (our grammar)', () => {
  it('answers the same keys as /rest/v1', async () => {
    const res = await api('sp_people?select=id,...sp_teams(name),...sp_pets(pets:name)&order=id&lte.id=2');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { id: 1, name: 'red', pets: ['Tom', 'Rex'] },
      { id: 2, name: 'blue', pets: [] },
    ]);
  });

  it('a to-one spread with !inner leaves out parents without a related row', async () => {
    const res = await api('sp_people?select=id,...sp_teams!inner(team:name)&order=id');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().map((r: { id: number }) => r.id)).toEqual([1, 2, 4]);
  });
});
