/**
 * The subscriptions of this instance and the delivery of changes to them (docs/realtime.md).
 *
 * Each subscription has a cursor: the seq up to which every change of its table has been
 * considered for it. Live, the change log hands batches in seq order and the hub delivers each
 * change to the subscriptions whose cursor is below it. A subscription that starts with `since`,
 * comes back from an expired token, or could not be served live (the database failed during an
 * authorization) replays instead: it reads its table's changes after its cursor up to what the
 * log has fetched, and goes live once that read finds nothing newer, in the same tick, so no
 * change falls between the two and none comes twice.
 *
 * Replays are bounded (review round 3, R4): one at a time per connection and
 * REPLAYS_PER_IP at a time per client address, the rest waiting their turn; and subscriptions of
 * one table replaying the same window share its read of the log (the last READ_CACHE windows read
 * are kept: below the frontier the log's content does not change).
 */
import type { Principal } from '../http/index.js';
import type { ColumnInfo } from '../rest/index.js';
import { type Audience, type Authorizer, Images } from './authorize.js';
import type { CompiledFilter } from './filter.js';
import { rowText } from '../changes/index.js';
import type { Change, ChangeLog } from '../changes/index.js';
import type { TableAccess } from './policies.js';
import { type ChangeEvent, type ChangeOp, changeMessage } from './protocol.js';

/** The connection side of a subscription (connection.ts). */
export interface Subscriber {
  principal: Principal;
  /** The client's address: replays and subscriptions are counted per address. */
  readonly ip: string;
  /** The token expired: deliveries wait (the cursor stays) until a fresh one arrives. */
  paused: boolean;
  /** Sends a message (a Buffer: UTF-8 text, encoded once for many); false when the client was dropped (too slow, or gone). */
  send(text: string | Buffer): boolean;
  /** Resolves once what was sent so far left for the network (replay paces itself on it). */
  flushed(): Promise<void>;
}

/** What one change is to a subscriber, for its format to write. */
export interface ChangeParts {
  seq: number;
  op: ChangeOp;
  table: string;
  /** JSON text of the row (the role's columns), null for delete and leave. */
  row: string | null;
  /** JSON text of the old row's primary key, null for insert. */
  old: string | null;
  /** When the row was written (RFC 3339, microseconds). */
  writtenAt: string;
}

/**
 * How a subscription's messages are written: Plinth's own protocol (PLINTH_FORMAT) or a face's
 * (Supabase's Phoenix frames). A message is built once per (format key, role, op, subscription id).
 */
export interface ChangeFormat {
  /** Distinct per format and per anything else its messages depend on (a Phoenix topic). */
  readonly key: string;
  /** The message of a change, or null: nothing is sent (the face has no word for it). */
  change(sub: Subscription, c: ChangeParts): string | null;
  /** The message that says a subscription is live, or null. */
  subscribed(sub: Subscription): string | null;
}

/** Plinth's own protocol (docs/realtime.md). */
export const PLINTH_FORMAT: ChangeFormat = {
  key: 'plinth',
  change: (sub, c) => changeMessage(sub.id, c.seq, c.op, c.table, c.row, c.old, c.writtenAt),
  subscribed: (sub) => `{"type":"subscribed","id":${JSON.stringify(sub.id)},"seq":${sub.cursor}}`,
};

export interface Subscription extends Audience {
  id: string;
  table: string;
  events: ReadonlySet<ChangeEvent>;
  filter: CompiledFilter;
  conn: Subscriber;
  /** The table's columns the role could select when it subscribed, in table order. */
  columns: ColumnInfo[];
  format: ChangeFormat;
  cursor: number;
  replaying: boolean;
  /** A `subscribed` message is owed once the replay has caught up. */
  announce: boolean;
  closed: boolean;
  /** A replay loop is running for it. */
  replayRunning: boolean;
  /** The connection's principal now (it changes with each `auth` message). */
  readonly principal: Principal;
}

export interface HubMetrics {
  delivered(n: number): void;
  lag(seconds: number): void;
}

export interface HubOptions {
  log: ChangeLog;
  authorizer: Authorizer;
  /** The access rules of a table, cached; null when it is gone. */
  access(table: string): Promise<TableAccess | null>;
  metrics: HubMetrics;
  onError(err: unknown, what: string): void;
}

/** Seqs read per replay statement. */
const REPLAY_WINDOW = 2000;
/** Replays running at once per client address (each connection runs one at a time). */
export const REPLAYS_PER_IP = 4;
/** Windows of the log kept for other replays of the same table and window. */
const READ_CACHE = 8;
const RETRY_MS = 500;

/** Whether a role sees a row only through owner policies: then its subscribers are found by user id. */
function ownerOnly(access: TableAccess, role: Principal['role']): string[] | null {
  const r = access.roles[role];
  if (!r.rls || r.restrictive.length > 0 || r.permissive.length === 0) return null;
  const cols: string[] = [];
  for (const p of r.permissive) {
    if (p.kind !== 'owner') return null;
    cols.push(p.column);
  }
  return cols;
}

/**
 * The subscriptions of a table that can see a change, found without looking at the others: with
 * owner policies, those whose user id is in the row's (or the old row's) owner column; every
 * subscription of a role the policies do not narrow that way.
 */
class Routes {
  private readonly byUid = new Map<string, Subscription[]>();
  private readonly others: Subscription[] = [];
  private readonly ownerColumns = new Set<string>();
  constructor(subs: Iterable<Subscription>, access: TableAccess) {
    const owner: Partial<Record<Principal['role'], string[] | null>> = {};
    for (const sub of subs) {
      const role = sub.principal.role;
      if (!(role in owner)) owner[role] = ownerOnly(access, role);
      const cols = owner[role];
      if (!cols) {
        this.others.push(sub);
        continue;
      }
      for (const c of cols) this.ownerColumns.add(c);
      const uid = sub.principal.uid;
      if (uid === null) continue; // no user: an owner policy shows it nothing
      const list = this.byUid.get(uid);
      if (list) list.push(sub);
      else this.byUid.set(uid, [sub]);
    }
  }
  audience(images: Images): Subscription[] {
    if (this.byUid.size === 0) return this.others;
    const found = new Set<Subscription>(this.others);
    for (const fields of [images.row, images.old]) {
      if (!fields) continue;
      for (const col of this.ownerColumns) {
        const v = fields.get(col);
        if (v === undefined || v.length < 3 || v[0] !== '"') continue;
        for (const sub of this.byUid.get(v.slice(1, -1)) ?? []) found.add(sub);
      }
    }
    return [...found];
  }
}

/**
 * The messages of one change, built once per distinct (subscription id, role, op) and encoded
 * once: a thousand subscribers of a public table under the SDK's ids share a handful of them.
 */
class Messages {
  private readonly cache = new Map<string, Buffer | null>();
  constructor(
    private readonly access: TableAccess,
    private readonly images: Images,
  ) {}
  for(sub: Subscription, op: ChangeOp): Buffer | null {
    const role = sub.principal.role;
    const key = `${sub.format.key}\u0000${role}\u0000${op}\u0000${sub.id}`;
    let m = this.cache.get(key);
    if (m === undefined) {
      const r = this.access.roles[role];
      const c = this.images.change;
      let row: string | null = null;
      // As PostgreSQL wrote it when the role may select every column; else its columns only.
      if (op === 'insert' || op === 'update') row = r.allColumns ? c.row : this.images.row && rowText(this.images.row, r.columns);
      let old: string | null = null;
      if (op !== 'insert') {
        const fields = this.images.old ?? this.images.row;
        if (fields) old = rowText(fields, new Set(this.access.pk.filter((k) => r.columns.has(k))));
      }
      const text = sub.format.change(sub, { seq: c.seq, op, table: c.table, row, old, writtenAt: c.writtenAt });
      m = text === null ? null : Buffer.from(text);
      this.cache.set(key, m);
    }
    return m;
  }
}

/**
 * Who may replay now: one subscription per connection and REPLAYS_PER_IP per address; the others
 * wait in arrival order.
 */
class ReplayGate {
  private readonly perConn = new Map<Subscriber, number>();
  private readonly perIp = new Map<string, number>();
  private readonly waiting: Array<{ conn: Subscriber; go: () => void }> = [];

  /** Resolves when `conn` may replay; call the returned release once done. */
  async enter(conn: Subscriber): Promise<() => void> {
    // A waiter is handed its slot by wake(), so none is taken twice or by a later arrival.
    if (this.free(conn)) this.take(conn, 1);
    else await new Promise<void>((go) => this.waiting.push({ conn, go }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.take(conn, -1);
      this.wake();
    };
  }

  /** Replays running now (tests and metrics). */
  running(): number {
    let n = 0;
    for (const v of this.perIp.values()) n += v;
    return n;
  }

  private free(conn: Subscriber): boolean {
    return (this.perConn.get(conn) ?? 0) < 1 && (this.perIp.get(conn.ip) ?? 0) < REPLAYS_PER_IP;
  }

  private take(conn: Subscriber, n: number): void {
    const c = (this.perConn.get(conn) ?? 0) + n;
    if (c > 0) this.perConn.set(conn, c);
    else this.perConn.delete(conn);
    const i = (this.perIp.get(conn.ip) ?? 0) + n;
    if (i > 0) this.perIp.set(conn.ip, i);
    else this.perIp.delete(conn.ip);
  }

  private wake(): void {
    const seen = new Set<Subscriber>();
    for (let k = 0; k < this.waiting.length; k++) {
      const w = this.waiting[k];
      if (seen.has(w.conn)) continue; // its earlier subscription goes first
      seen.add(w.conn);
      if (!this.free(w.conn)) continue;
      this.waiting.splice(k, 1);
      k--;
      // Its slot, counted now: the next waiter of the same connection or address sees it taken.
      this.take(w.conn, 1);
      w.go();
    }
  }
}

export class Hub {
  private readonly byTable = new Map<string, Set<Subscription>>();
  private readonly perIp = new Map<string, number>();
  private readonly gate = new ReplayGate();
  /**
   * Windows of the log read by replays, by table and window (shared, R4), each with the access
   * rules it was read under: a schema change (a table dropped and made again) reads afresh.
   */
  private readonly reads = new Map<string, { access: TableAccess; page: Promise<Change[]> }>();
  constructor(private readonly o: HubOptions) {}

  /** Subscriptions held by connections of a client address. */
  subscriptionsOfIp(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  /** Replays running now. */
  replaysRunning(): number {
    return this.gate.running();
  }

  /** Live subscriptions (for GET /metrics). */
  count(): number {
    let n = 0;
    for (const s of this.byTable.values()) n += s.size;
    return n;
  }

  /**
   * Adds a subscription: live from the log's frontier, or replaying from `since`. The
   * `subscribed` message goes out when it is live (after the replayed changes).
   */
  add(sub: Subscription, since: number | null): void {
    let set = this.byTable.get(sub.table);
    if (!set) {
      set = new Set();
      this.byTable.set(sub.table, set);
    }
    if (!set.has(sub)) {
      set.add(sub);
      this.perIp.set(sub.conn.ip, this.subscriptionsOfIp(sub.conn.ip) + 1);
    }
    const frontier = this.o.log.frontier();
    if (since === null || since >= frontier) {
      sub.cursor = Math.max(frontier, since ?? 0);
      sub.replaying = false;
      this.announce(sub);
      return;
    }
    sub.cursor = since;
    sub.replaying = true;
    sub.announce = true;
    void this.replay(sub);
  }

  remove(sub: Subscription): void {
    sub.closed = true;
    const set = this.byTable.get(sub.table);
    if (set?.delete(sub)) {
      const n = this.subscriptionsOfIp(sub.conn.ip) - 1;
      if (n > 0) this.perIp.set(sub.conn.ip, n);
      else this.perIp.delete(sub.conn.ip);
    }
    if (set?.size === 0) this.byTable.delete(sub.table);
  }

  /** Ends every subscription of a table (its capture was switched off, or it was dropped). */
  subscriptionsOf(table: string): Subscription[] {
    return [...(this.byTable.get(table) ?? [])];
  }

  /** A connection's token was renewed after it expired: its subscriptions catch up from their cursors. */
  resume(subs: Iterable<Subscription>): void {
    for (const sub of subs) {
      if (sub.closed) continue;
      sub.replaying = true;
      void this.replay(sub);
    }
  }

  private announce(sub: Subscription): void {
    if (sub.closed) return;
    const text = sub.format.subscribed(sub);
    if (text !== null) sub.conn.send(text);
    sub.announce = false;
  }

  /** A batch from the log, in seq order: each change to each live subscription of its table. */
  async dispatch(changes: Change[]): Promise<void> {
    const items: Array<{ images: Images; access: TableAccess; audiences: Subscription[] }> = [];
    const routes = new Map<string, Routes>();
    for (const change of changes) {
      const set = this.byTable.get(change.table);
      if (!set) continue;
      const access = await this.o.access(change.table);
      if (!access) continue;
      let route = routes.get(change.table);
      if (!route) {
        route = new Routes(set, access);
        routes.set(change.table, route);
      }
      const images = new Images(change);
      const audiences = route.audience(images).filter((s) => !s.replaying && !s.closed && s.cursor < change.seq && !s.conn.paused);
      if (audiences.length === 0) continue;
      items.push({ images, access, audiences });
    }
    // Subscriptions passed over (not in an audience) are considered too: their cursors move on.
    const advance = () => {
      const last = changes[changes.length - 1]?.seq ?? 0;
      for (const table of new Set(changes.map((c) => c.table))) {
        for (const sub of this.byTable.get(table) ?? []) {
          if (!sub.replaying && !sub.conn.paused && sub.cursor < last) sub.cursor = last;
        }
      }
    };
    if (items.length === 0) {
      advance();
      return;
    }
    // Each audience's principal as the decision is asked: an `auth` message may change it
    // meanwhile, and a decision for one role is never sent with another's columns (R7).
    const asked = items.map((i) => i.audiences.map((s) => s.principal));
    let ops: Array<Array<ChangeOp | null>>;
    try {
      ops = await this.o.authorizer.decide(items);
    } catch (err) {
      // Nothing is delivered that was not authorized, and nothing is lost: these subscriptions
      // read the batch again from the log once the database answers.
      this.o.onError(err, 'authorizing changes');
      const behind = new Set(items.flatMap((i) => i.audiences));
      for (const sub of behind) sub.replaying = true;
      setTimeout(() => this.resume(behind), RETRY_MS).unref();
      return;
    }
    const now = Date.now();
    let delivered = 0;
    const changedRole = new Set<Subscription>();
    items.forEach(({ images, access, audiences }, i) => {
      const seq = images.change.seq;
      const lag = (now - Date.parse(images.change.writtenAt)) / 1000;
      const messages = new Messages(access, images);
      audiences.forEach((sub, j) => {
        // Replaying, paused or gone since the batch began: the replay (or nothing) takes it.
        if (sub.closed || sub.replaying || sub.conn.paused || sub.cursor >= seq) return;
        if (changedRole.has(sub) || sub.principal !== asked[i][j]) {
          // Decided for the principal it had: read again from its cursor under the new one.
          changedRole.add(sub);
          return;
        }
        const op = ops[i][j];
        sub.cursor = seq;
        if (op === null) return;
        const message = messages.for(sub, op);
        if (message === null) return;
        if (sub.conn.send(message)) {
          delivered++;
          this.o.metrics.lag(lag);
        }
      });
    });
    for (const sub of changedRole) sub.replaying = true;
    advance();
    this.o.metrics.delivered(delivered);
    if (changedRole.size > 0) this.resume(changedRole);
  }

  /** Reads the subscription's table after its cursor until it has caught up with the live feed. */
  private async replay(sub: Subscription): Promise<void> {
    if (sub.replayRunning) return;
    sub.replayRunning = true;
    // Its turn first: one replay per connection, REPLAYS_PER_IP per address (R4).
    const release = await this.gate.enter(sub.conn);
    try {
      for (;;) {
        if (sub.closed || sub.conn.paused) return;
        const frontier = this.o.log.frontier();
        // A window of seqs at a time (of every table: the log is numbered as one).
        const upto = Math.min(frontier, sub.cursor + REPLAY_WINDOW);
        const access = await this.o.access(sub.table);
        if (!access) return;
        const page = upto > sub.cursor ? await this.read(access, sub.table, sub.cursor, upto) : [];
        if (sub.closed || sub.conn.paused) return;
        if (page.length > 0) {
          const items = page.map((change) => ({ images: new Images(change), access, audiences: [sub] }));
          const asked = sub.principal;
          const ops = await this.o.authorizer.decide(items);
          if (sub.closed || sub.conn.paused) return;
          // An `auth` message changed the principal meanwhile: this window again, under the new one.
          if (sub.principal !== asked) continue;
          let delivered = 0;
          for (const [i, { images }] of items.entries()) {
            const op = ops[i][0];
            sub.cursor = images.change.seq;
            const message = op === null ? null : new Messages(access, images).for(sub, op);
            if (message !== null) {
              if (!sub.conn.send(message)) return;
              delivered++;
            }
          }
          this.o.metrics.delivered(delivered);
          await sub.conn.flushed();
        }
        sub.cursor = Math.max(sub.cursor, upto);
        // Caught up when nothing newer was fetched meanwhile: live from here, in this same tick.
        if (upto === frontier && this.o.log.frontier() === frontier) {
          sub.replaying = false;
          if (sub.announce) this.announce(sub);
          return;
        }
      }
    } catch (err) {
      this.o.onError(err, 'replaying changes');
      if (!sub.closed) setTimeout(() => void this.replay(sub), RETRY_MS).unref();
    } finally {
      sub.replayRunning = false;
      release();
    }
  }

  /** The changes of a table in (from, upto], read once for every replay of that window. */
  private read(access: TableAccess, table: string, from: number, upto: number): Promise<Change[]> {
    const key = `${table}\u0000${from}\u0000${upto}`;
    const hit = this.reads.get(key);
    this.reads.delete(key);
    if (hit?.access === access) {
      // Most recently used last.
      this.reads.set(key, hit);
      return hit.page;
    }
    const page = this.o.log.read(table, from, upto);
    const entry = { access, page };
    this.reads.set(key, entry);
    page.catch(() => {
      if (this.reads.get(key) === entry) this.reads.delete(key);
    });
    while (this.reads.size > READ_CACHE) this.reads.delete(this.reads.keys().next().value as string);
    return page;
  }
}
