import { describe, expect, it } from 'vitest';
import type { Principal } from '../http/index.js';
import { cachedRights } from './channel-rights.js';

// The cache of private channels' decisions (issue 37): per (topic, role, claims), never past its
// time or the token's expiry, bounded in size, and forgotten when the policies change.

const user = (claims: Record<string, unknown>, exp = 4_000_000_000): Principal =>
  ({
    role: 'authenticated',
    claims: JSON.stringify({ ...claims, exp }),
    uid: String(claims.sub),
    payload: { ...claims, exp },
  }) as unknown as Principal;

function counting() {
  const asked: string[] = [];
  const decide = async (who: Principal, topic: string) => {
    asked.push(`${topic}:${who.claims}`);
    return { read: true, write: topic.startsWith('w') };
  };
  return { asked, decide };
}

describe('cachedRights', () => {
  it('asks once per topic and claims; other claims, another topic or a cleared cache ask again', async () => {
    const { asked, decide } = counting();
    const cache = cachedRights(decide);
    const ada = user({ sub: 'ada', app_metadata: { team: 'red' } });
    expect(await cache.rights(ada, 'room')).toEqual({ read: true, write: false });
    expect(await cache.rights(ada, 'room')).toEqual({ read: true, write: false });
    expect(asked).toHaveLength(1);
    // The same user with a new token (other claims: a role or team changed, a refresh): decided again.
    await cache.rights(user({ sub: 'ada', app_metadata: { team: 'blue' } }), 'room');
    await cache.rights(ada, 'write-room');
    expect(asked).toHaveLength(3);
    cache.clear();
    await cache.rights(ada, 'room');
    expect(asked).toHaveLength(4);
  });

  it('keeps a decision no longer than its time, nor past the token’s expiry', async () => {
    let now = 1_000_000;
    const { asked, decide } = counting();
    const cache = cachedRights(decide, { now: () => now, ttlMs: 30_000 });
    const long = user({ sub: 'a' });
    await cache.rights(long, 'room');
    now += 29_999;
    await cache.rights(long, 'room');
    expect(asked).toHaveLength(1);
    now += 1;
    await cache.rights(long, 'room');
    expect(asked).toHaveLength(2);
    // A token expiring in 5 s: kept 5 s, not 30.
    const short = user({ sub: 'b' }, Math.floor(now / 1000) + 5);
    await cache.rights(short, 'room');
    now = (Math.floor(now / 1000) + 5) * 1000;
    await cache.rights(short, 'room');
    expect(asked).toHaveLength(4);
  });

  it('a decision made while the policies changed is not kept; the service is never cached', async () => {
    const asked: string[] = [];
    let cache: ReturnType<typeof cachedRights> | null = null;
    cache = cachedRights(async (_who, topic) => {
      asked.push(topic);
      cache?.clear();
      return { read: true, write: true };
    });
    const ada = user({ sub: 'ada' });
    await cache.rights(ada, 'room');
    await cache.rights(ada, 'room');
    expect(asked).toEqual(['room', 'room']);
    const service = { role: 'service', claims: '{"role":"service"}', uid: null } as Principal;
    const plain = counting();
    const c2 = cachedRights(plain.decide);
    await c2.rights(service, 'room');
    await c2.rights(service, 'room');
    expect(plain.asked).toHaveLength(2);
  });

  it('holds at most `max` decisions, the oldest going first', async () => {
    const { asked, decide } = counting();
    const cache = cachedRights(decide, { max: 2 });
    const ada = user({ sub: 'ada' });
    for (const topic of ['a', 'b', 'c']) await cache.rights(ada, topic);
    await cache.rights(ada, 'c');
    await cache.rights(ada, 'b');
    expect(asked).toHaveLength(3);
    await cache.rights(ada, 'a');
    expect(asked).toHaveLength(4);
  });
});
