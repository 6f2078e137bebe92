import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../../test/harness.js';
import { type restClient, restServer } from '../../../test/supabase-rest.js';

// How /rest/v1 names an embedding the way PostgREST does: by a foreign key's constraint name,
// and its PGRST200/PGRST201 texts (the hint spelled target!constraint, the hint searched for).
let t: TestServer;
let anon: ReturnType<typeof restClient>;

const SCHEMA = `
create table players (name text primary key);
create table matches (id int primary key, home text references players, away text references players);
grant select on players, matches to anon;
create policy all_players on players for select using (true);
create policy all_matches on matches for select using (true);
insert into players values ('ann'), ('ben'), ('cat');
insert into matches values (1, 'ann', 'ben'), (2, 'cat', 'ann');
`;

beforeAll(async () => {
  ({ t, anon } = await restServer(SCHEMA));
});
afterAll(() => t?.stop());

describe('embedding names', () => {
  it("a foreign key's constraint name embeds its relation, from either side", async () => {
    const players = await anon
      .from('players')
      .select('name, at_home:matches_home_fkey(id), away:matches_away_fkey(id)')
      .eq('name', 'ann')
      .single();
    expect(players.error).toBeNull();
    expect(players.data).toEqual({ name: 'ann', at_home: [{ id: 1 }], away: [{ id: 2 }] });
    const matches = await anon.from('matches').select('id, host:matches_home_fkey(name)').eq('id', 2);
    expect(matches.data).toEqual([{ id: 2, host: { name: 'cat' } }]);
  });

  it('several keys to one table: 300 PGRST201, the hint spelling each as target!constraint', async () => {
    const res = await anon.from('matches').select('id, players(name)');
    expect(res.status).toBe(300);
    expect(res.error?.code).toBe('PGRST201');
    expect(res.error?.hint).toBe(
      "Try changing 'players' to one of the following: 'players!matches_away_fkey', 'players!matches_home_fkey'. Find the desired relationship in the 'details' key.",
    );
  });

  it('a hint that matches nothing: PGRST200 saying which hint it searched with', async () => {
    const res = await anon.from('matches').select('id, players!nope(name)');
    expect(res.status).toBe(400);
    expect(res.error).toEqual({
      code: 'PGRST200',
      details:
        "Searched for a foreign key relationship between 'matches' and 'players' using the hint 'nope' in the schema 'public', but no matches were found.",
      hint: null,
      message: "Could not find a relationship between 'matches' and 'players' in the schema cache",
    });
  });
});
