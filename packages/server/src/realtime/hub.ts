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
 */
import type { Principal } from '../http/index.js';
import { type Audience, type Authorizer, Images } from './authorize.js';
import type { CompiledFilter } from './filter.js';
import { rowText } from './json-row.js';
import type { Change, ChangeLog } from './log.js';
import type { TableAccess } from './policies.js';
import { type ChangeEvent, type ChangeOp, changeMessage } from './protocol.js';

/** The connection side of a subscription (connection.ts). */
export interface Subscriber {
  principal: Principal;
  /** The token expired: deliveries wait (the cursor stays) until a fresh one arrives. */
  paused: boolean;
  /** Sends a message; false when the client was dropped (too slow, or gone). */
  send(text: string): boolean;
  /** Resolves once what was sent so far left for the network (replay paces itself on it). */
  flushed(): Promise<void>;
}

export interface Subscription extends Audience {
  id: string;
  table: string;
  events: ReadonlySet<ChangeEvent>;
  filter: CompiledFilter;
  conn: Subscriber;
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

const REPLAY_PAGE = 500;
const RETRY_MS = 500;

/**
 * The key columns of a row image: what `old` carries (only those the role may select).
 */
function keyText(access: TableAccess, role: Principal['role'], images: Images): string | null {
  const fields = images.old ?? images.row;
  if (!fields) return null;
  const cols = access.roles[role].columns;
  return rowText(fields, new Set(access.pk.filter((c) => cols.has(c))));
}

/** The message a subscription gets for a change (`op` decided by the authorizer). */
function message(sub: Subscription, access: TableAccess, images: Images, op: ChangeOp): string {
  const role = access.roles[sub.principal.role];
  const c = images.change;
  let row: string | null = null;
  if (op === 'insert' || op === 'update') {
    // As PostgreSQL wrote it when the role may select every column; else its columns only.
    row = role.allColumns ? c.row : images.row && rowText(images.row, role.columns);
  }
  const old = op === 'insert' ? null : keyText(access, sub.principal.role, images);
  return changeMessage(sub.id, c.seq, op, c.table, row, old, c.writtenAt);
}

export class Hub {
  private readonly byTable = new Map<string, Set<Subscription>>();
  constructor(private readonly o: HubOptions) {}

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
    set.add(sub);
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
    set?.delete(sub);
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
    sub.conn.send(`{"type":"subscribed","id":${JSON.stringify(sub.id)},"seq":${sub.cursor}}`);
    sub.announce = false;
  }

  /** A batch from the log, in seq order: each change to each live subscription of its table. */
  async dispatch(changes: Change[]): Promise<void> {
    const items: Array<{ images: Images; access: TableAccess; audiences: Subscription[] }> = [];
    for (const change of changes) {
      const set = this.byTable.get(change.table);
      if (!set) continue;
      const audiences = [...set].filter((s) => !s.replaying && !s.conn.paused && s.cursor < change.seq);
      if (audiences.length === 0) continue;
      const access = await this.o.access(change.table);
      if (!access) continue;
      items.push({ images: new Images(change), access, audiences });
    }
    if (items.length === 0) return;
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
    items.forEach(({ images, access, audiences }, i) => {
      const seq = images.change.seq;
      const lag = (now - Date.parse(images.change.writtenAt)) / 1000;
      audiences.forEach((sub, j) => {
        // Replaying, paused or gone since the batch began: the replay (or nothing) takes it.
        if (sub.closed || sub.replaying || sub.conn.paused || sub.cursor >= seq) return;
        const op = ops[i][j];
        sub.cursor = seq;
        if (op === null) return;
        if (sub.conn.send(message(sub, access, images, op))) {
          delivered++;
          this.o.metrics.lag(lag);
        }
      });
    });
    this.o.metrics.delivered(delivered);
  }

  /** Reads the subscription's table after its cursor until it has caught up with the live feed. */
  private async replay(sub: Subscription): Promise<void> {
    if (sub.replayRunning) return;
    sub.replayRunning = true;
    try {
      for (;;) {
        if (sub.closed || sub.conn.paused) return;
        const upto = this.o.log.frontier();
        const page = await this.o.log.read(sub.table, sub.cursor, upto, REPLAY_PAGE);
        if (sub.closed || sub.conn.paused) return;
        if (page.length > 0) {
          const access = await this.o.access(sub.table);
          if (!access) return;
          const items = page.map((change) => ({ images: new Images(change), access, audiences: [sub] }));
          const ops = await this.o.authorizer.decide(items);
          if (sub.closed || sub.conn.paused) return;
          let delivered = 0;
          for (const [i, { images }] of items.entries()) {
            const op = ops[i][0];
            sub.cursor = images.change.seq;
            if (op !== null) {
              if (!sub.conn.send(message(sub, access, images, op))) return;
              delivered++;
            }
          }
          this.o.metrics.delivered(delivered);
          await sub.conn.flushed();
          if (page.length === REPLAY_PAGE) continue;
        }
        // Caught up when nothing newer was fetched meanwhile: live from here, in this same tick.
        if (this.o.log.frontier() === upto) {
          sub.cursor = Math.max(sub.cursor, upto);
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
    }
  }
}
