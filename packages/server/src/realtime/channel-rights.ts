/**
 * Who may join and send on a private channel (issue 37): Supabase's model, so its policies work as
 * written. A policy on `realtime.messages` decides, with `realtime.topic()` the channel asked
 * about: reading a row of the topic is joining, inserting one is sending. Asked once per join
 * (and per HTTP send), in one transaction that is rolled back: the server writes a probe row of
 * the topic, then, as the caller (plinth.run_as: role and claims as every request has them),
 * reads it back and inserts another. Nothing stays.
 *
 * The joins of one tick are decided together (batchedRights): one transaction and one statement
 * (plinth.channel_rights, migration 0195) per caller for up to BATCH_TOPICS topics, the same
 * probes topic by topic inside it.
 */
import { randomUUID } from 'node:crypto';
import { type Db, DbError, runAsUid } from '../db/index.js';
import type { Principal } from '../http/index.js';

export interface ChannelRights {
  /** May join (read the channel's messages). */
  read: boolean;
  /** May send: broadcast and presence. */
  write: boolean;
}

/** Thrown inside the transaction to roll it back once the rights are known. */
class Decided extends Error {
  constructor(readonly rights: ChannelRights) {
    super('decided');
  }
}

/** Thrown inside channelRightsMany's transaction to roll it back once its rows are read. */
class RolledBack extends Error {}

/** SQLSTATE of a refusal by a policy or a grant. */
const REFUSED = '42501';

/**
 * @example await channelRights(db, principal, 'room-1') // { read: true, write: false }
 */
export async function channelRights(db: Db, who: Principal, topic: string): Promise<ChannelRights> {
  if (who.role === 'service') return { read: true, write: true };
  const asCaller = (stmt: string, values: string[]) => [who.role, who.claims, runAsUid(who), stmt, values, false];
  try {
    await db.transaction(async (tx) => {
      // The statements are sent together (pipelined on PostgreSQL, where a join used to wait for
      // five round trips in a row): the probe's id is made here so no statement waits for
      // another's answer. Only the last may fail (the caller may not insert).
      const probe = randomUUID();
      const run = 'select n from plinth.run_as($1, $2, $3, $4, $5::text[], $6)';
      const [topicSet, probed, seen, reset, sent] = await Promise.allSettled([
        tx.query("select set_config('realtime.topic', $1, true)", [topic]),
        tx.query("insert into realtime.messages (id, topic, extension, private) values ($1::uuid, $2, 'broadcast', true)", [probe, topic]),
        tx.query<{ n: string | number }>(
          run,
          asCaller("select 1 from realtime.messages where id = ($1)[1]::uuid and topic = ($1)[2] and extension = 'broadcast'", [
            probe,
            topic,
          ]),
        ),
        // Back to the server's own role: run_as is not the caller's to run.
        tx.query('reset role'),
        tx.query(run, asCaller("insert into realtime.messages (topic, extension, private) values (($1)[1], 'broadcast', true)", [topic])),
      ]);
      for (const step of [topicSet, probed, seen, reset]) if (step.status === 'rejected') throw step.reason;
      if (sent.status === 'rejected' && !(sent.reason instanceof DbError && sent.reason.sqlstate === REFUSED)) throw sent.reason;
      const read = seen.status === 'fulfilled' && Number(seen.value.rows[0]?.n ?? 0) > 0;
      throw new Decided({ read, write: sent.status === 'fulfilled' });
    });
  } catch (err) {
    if (err instanceof Decided) return err.rights;
    throw err;
  }
  throw new Error('channel rights: the transaction ended without a decision');
}

/** Topics decided in one statement at most. */
export const BATCH_TOPICS = 100;

/**
 * The rights of one caller on several topics, in one transaction that is rolled back, one
 * statement (plinth.channel_rights, migration 0195): per topic, what channelRights decides.
 * @example await channelRightsMany(db, principal, ['room-1', 'room-2']) // Map { 'room-1' => { read: true, write: false }, … }
 */
export async function channelRightsMany(db: Db, who: Principal, topics: string[]): Promise<Map<string, ChannelRights>> {
  if (who.role === 'service') return new Map(topics.map((t) => [t, { read: true, write: true }]));
  let rows: Array<{ topic: string; can_read: boolean; can_write: boolean }> = [];
  try {
    await db.transaction(async (tx) => {
      const r = await tx.query<{ topic: string; can_read: boolean; can_write: boolean }>(
        'select topic, can_read, can_write from plinth.channel_rights($1, $2, $3, $4::text[])',
        [who.role, who.claims, runAsUid(who), topics],
      );
      rows = r.rows;
      throw new RolledBack('decided');
    });
  } catch (err) {
    if (!(err instanceof RolledBack)) throw err;
  }
  const out = new Map<string, ChannelRights>();
  for (const row of rows) out.set(row.topic, { read: row.can_read === true, write: row.can_write === true });
  return out;
}

/**
 * Decides each tick's asks together: per caller (role, claims and user alike), one
 * channelRightsMany of up to BATCH_TOPICS topics, the same topic asked twice decided once. When a
 * batch fails (a policy that errs for one topic fails the statement), each of its topics is
 * decided alone (channelRights), so only that topic's join fails.
 * @example const decide = batchedRights(db); await decide(principal, 'room-1');
 */
export function batchedRights(
  db: Db,
  o: {
    many?: (who: Principal, topics: string[]) => Promise<Map<string, ChannelRights>>;
    one?: (who: Principal, topic: string) => Promise<ChannelRights>;
    max?: number;
  } = {},
): (who: Principal, topic: string) => Promise<ChannelRights> {
  const many = o.many ?? ((who: Principal, topics: string[]) => channelRightsMany(db, who, topics));
  const one = o.one ?? ((who: Principal, topic: string) => channelRights(db, who, topic));
  const max = o.max ?? BATCH_TOPICS;
  type Ask = { resolve: (r: ChannelRights) => void; reject: (e: unknown) => void };
  /** caller key → the caller and its topics asked this tick. */
  let queued = new Map<string, { who: Principal; topics: Map<string, Ask[]> }>();
  let scheduled = false;

  const decide = async (who: Principal, topics: Map<string, Ask[]>) => {
    const names = [...topics.keys()];
    let decided: Map<string, ChannelRights> | null = null;
    try {
      decided = await many(who, names);
    } catch (err) {
      // The database is down: every ask fails alike, without asking it again once per topic.
      if ((err as Error)?.name === 'DbUnavailableError') {
        for (const asks of topics.values()) for (const a of asks) a.reject(err);
        return;
      }
      // One topic's policy failed the statement: each alone, so the others still get their answer.
    }
    for (const [topic, asks] of topics) {
      const hit = decided?.get(topic);
      const answer = hit ? Promise.resolve(hit) : one(who, topic);
      answer.then(
        (r) => {
          for (const a of asks) a.resolve(r);
        },
        (e) => {
          for (const a of asks) a.reject(e);
        },
      );
    }
  };

  const flush = () => {
    scheduled = false;
    const batch = queued;
    queued = new Map();
    for (const { who, topics } of batch.values()) {
      let chunk = new Map<string, Ask[]>();
      for (const [topic, asks] of topics) {
        chunk.set(topic, asks);
        if (chunk.size >= max) {
          void decide(who, chunk);
          chunk = new Map();
        }
      }
      if (chunk.size > 0) void decide(who, chunk);
    }
  };

  return (who, topic) => {
    if (who.role === 'service') return one(who, topic);
    return new Promise<ChannelRights>((resolve, reject) => {
      const key = JSON.stringify([who.role, who.claims, runAsUid(who)]);
      let entry = queued.get(key);
      if (!entry) queued.set(key, (entry = { who, topics: new Map() }));
      const asks = entry.topics.get(topic);
      if (asks) asks.push({ resolve, reject });
      else entry.topics.set(topic, [{ resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };
}

export interface RightsCache {
  /** The rights of `who` on `topic`: decided once per (topic, role, claims), then kept. */
  rights(who: Principal, topic: string): Promise<ChannelRights>;
  /** Forgets every decision (a policy changed). */
  clear(): void;
}

/** How long a decision is kept at most, however long the token lives. */
export const RIGHTS_TTL_MS = 30_000;
/** Decisions kept at most (the oldest go first). */
export const RIGHTS_MAX = 10_000;

/**
 * Decisions kept per (topic, role, claims) (issue 37: authorization cached per channel and user):
 * the same token joining again, or sending over HTTP again, asks no policy. A new token (another
 * user, a role or app_metadata changed, a refresh) has other claims and is decided afresh; a
 * revoked session or a ban never gets here (the token is refused first); a change of policies
 * clears everything (realtime/index.ts, on the schema's change); and nothing is kept past
 * RIGHTS_TTL_MS or the token's expiry.
 * @example const cache = cachedRights((who, topic) => channelRights(db, who, topic));
 */
export function cachedRights(
  decide: (who: Principal, topic: string) => Promise<ChannelRights>,
  o: { now?: () => number; ttlMs?: number; max?: number } = {},
): RightsCache {
  const now = o.now ?? Date.now;
  const ttl = o.ttlMs ?? RIGHTS_TTL_MS;
  const max = o.max ?? RIGHTS_MAX;
  const kept = new Map<string, { rights: ChannelRights; until: number }>();
  let generation = 0;
  return {
    async rights(who, topic) {
      if (who.role === 'service') return decide(who, topic);
      const key = JSON.stringify([topic, who.role, who.claims]);
      const hit = kept.get(key);
      if (hit && hit.until > now()) return hit.rights;
      kept.delete(key);
      const asked = generation;
      const rights = await decide(who, topic);
      // A policy changed while this was decided: not kept.
      if (asked !== generation) return rights;
      const exp = who.role === 'authenticated' ? who.payload.exp : undefined;
      const until = Math.min(now() + ttl, typeof exp === 'number' ? exp * 1000 : Number.POSITIVE_INFINITY);
      kept.set(key, { rights, until });
      if (kept.size > max) kept.delete(kept.keys().next().value as string);
      return rights;
    },
    clear() {
      generation++;
      kept.clear();
    },
  };
}
