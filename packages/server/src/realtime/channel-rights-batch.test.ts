import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import type { Principal } from '../http/index.js';
import { batchedRights, type ChannelRights, channelRights, channelRightsMany } from './channel-rights.js';

// Private channels' rights decided several at a time (issue 37's private join throughput): one
// statement (plinth.channel_rights, migration 0195) answers for many topics exactly what one
// decision per topic answers, leaves nothing in realtime.messages, and a policy that fails for one
// topic fails that topic's join only.

const ADA = '00000000-0000-4000-8000-0000000000a1';
const BOB = '00000000-0000-4000-8000-0000000000b2';
let t: TestServer;

const user = (sub: string, team: string, writer: boolean): Principal => {
  const payload = { sub, role: 'authenticated', app_metadata: { team, writer }, exp: 4_000_000_000 };
  return { role: 'authenticated', claims: JSON.stringify(payload), uid: sub, payload } as unknown as Principal;
};
const anon = { role: 'anon', claims: '{"role":"anon"}', uid: null } as unknown as Principal;

beforeAll(async () => {
  t = await createTestServer();
  await t.db.query(`
    create policy "team reads its channel" on realtime.messages for select to authenticated
      using (realtime.topic() = 'team-' || (auth.jwt() -> 'app_metadata' ->> 'team')
             or realtime.topic() like 'open-%'
             or (realtime.topic() = 'boom' and 1 / (length(realtime.topic()) - 4) = 1))`);
  await t.db.query(`
    create policy "team writers send on it" on realtime.messages for insert to authenticated
      with check (realtime.topic() = 'team-' || (auth.jwt() -> 'app_metadata' ->> 'team')
                  and (auth.jwt() -> 'app_metadata' ->> 'writer')::boolean)`);
});
afterAll(async () => {
  await t?.stop();
});

const rows = async () => Number((await t.db.query<{ n: string }>('select count(*) as n from realtime.messages')).rows[0].n);

describe('private channel rights, many topics in one statement', () => {
  it('answers for each topic what a decision of its own answers, and leaves no row behind', async () => {
    const before = await rows();
    const topics = ['team-red', 'team-blue', 'open-1', 'elsewhere', "it's-quoted", 'team-red'];
    for (const who of [user(ADA, 'red', true), user(BOB, 'red', false), user(BOB, 'blue', true), anon]) {
      const many = await channelRightsMany(t.db, who, topics);
      for (const topic of topics) expect(many.get(topic), `${who.claims} ${topic}`).toEqual(await channelRights(t.db, who, topic));
    }
    const writer = await channelRightsMany(t.db, user(ADA, 'red', true), ['team-red', 'team-blue', 'open-1']);
    expect(Object.fromEntries(writer)).toEqual({
      'team-red': { read: true, write: true },
      'team-blue': { read: false, write: false },
      'open-1': { read: true, write: false },
    });
    expect(await rows()).toBe(before);
  });

  it('decides a tick of asks together; a topic whose policy fails fails alone', async () => {
    const decide = batchedRights(t.db);
    const ada = user(ADA, 'red', true);
    const bob = user(BOB, 'blue', false);
    const asks: Array<Promise<ChannelRights>> = [];
    const expected: Array<ChannelRights | 'error'> = [];
    for (let i = 0; i < 30; i++) {
      asks.push(decide(ada, `open-${i}`), decide(bob, i % 2 ? 'team-blue' : 'team-red'));
      expected.push({ read: true, write: false }, i % 2 ? { read: true, write: false } : { read: false, write: false });
    }
    asks.push(decide(ada, 'boom'), decide(ada, 'team-red'));
    expected.push('error', { read: true, write: true });
    const settled = await Promise.allSettled(asks);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'error'))).toEqual(expected);
  });
});

describe('batchedRights (no database)', () => {
  it('asks once per caller per tick, each topic once, at most `max` topics a statement', async () => {
    const calls: string[][] = [];
    const decide = batchedRights(null as never, {
      many: async (_who, topics) => {
        calls.push(topics);
        return new Map(topics.map((x) => [x, { read: true, write: x.startsWith('w') }]));
      },
      one: async () => {
        throw new Error('not asked alone');
      },
      max: 4,
    });
    const a = user(ADA, 'red', true);
    const b = user(BOB, 'red', true);
    const answers = await Promise.all([
      decide(a, 'r1'),
      decide(a, 'w2'),
      decide(a, 'r1'),
      decide(a, 'r3'),
      decide(a, 'r4'),
      decide(a, 'r5'),
      decide(b, 'r1'),
    ]);
    expect(answers.map((r) => r.write)).toEqual([false, true, false, false, false, false, false]);
    expect(calls).toEqual([['r1', 'w2', 'r3', 'r4'], ['r5'], ['r1']]);
  });
});
