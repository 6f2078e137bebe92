/**
 * The pool `Db.runAs` runs on, on PostgreSQL: up to `max` WireConnections of one login. A
 * batch goes to an idle connection, else to a new one while under `max`, else behind the
 * batches of the least busy one (pipelined, as postgres.js does when its pool is full). A
 * failed connect is tried again after `backoff` (the owner's pool's, db/postgres.ts), so an
 * outage answers at once and the pool is back as soon as the database is. Idle connections
 * end after a minute, every connection after half an hour.
 */
import { STATEMENT_GONE } from './run-as.js';
import type { RoleContext, RunAsResult } from './types.js';
import { connectionError, WireConnection, type WireTarget, wireTarget } from './wire-connection.js';

export interface WirePoolOptions {
  max: number;
  connectTimeoutS: number;
  applicationName: string;
  /** Seconds to wait before the next connect after `attempts` failed in a row. */
  backoff: (attempts: number) => number;
  idleTimeoutS?: number;
  maxLifetimeS?: number;
}

export class WirePool {
  private readonly conns = new Set<WireConnection>();
  private readonly opening = new Set<Promise<WireConnection>>();
  private readonly idleTimers = new Map<WireConnection, NodeJS.Timeout>();
  private readonly target: WireTarget;
  private failures = 0;
  private failedAt = 0;
  private ended = false;

  constructor(
    url: string,
    private readonly options: WirePoolOptions,
  ) {
    this.target = wireTarget(url, options.applicationName);
  }

  /** Connections open or being opened. */
  get size(): number {
    return this.conns.size + this.opening.size;
  }

  /**
   * One request (db/run-as.ts). A batch refused because its session's statements were dropped
   * under it (26000) ran nothing (its transaction rolled back) and is sent once more, prepared afresh.
   * @example await pool.runAs({ role: 'anon', claims: '{}' }, 'select …', [], true)
   */
  async runAs(ctx: RoleContext, text: string, params: string[], rows: boolean): Promise<RunAsResult> {
    try {
      return await (await this.pick()).runAs(ctx, text, params, rows);
    } catch (err) {
      if ((err as { code?: string })?.code !== STATEMENT_GONE) throw err;
      return await (await this.pick()).runAs(ctx, text, params, rows);
    }
  }

  /** Opens a connection now: rejects when the login cannot connect. */
  async connect(): Promise<void> {
    await this.pick();
  }

  /** Ends every connection, after its batches are answered (at most `timeoutS`). */
  async end(timeoutS: number): Promise<void> {
    this.ended = true;
    for (const t of this.idleTimers.values()) clearTimeout(t);
    this.idleTimers.clear();
    await Promise.allSettled([...this.opening]);
    await Promise.all([...this.conns].map((c) => c.end(timeoutS * 1000)));
  }

  private pick(): Promise<WireConnection> {
    if (this.ended) return Promise.reject(connectionError('CONNECTION_ENDED', 'The pool was closed.'));
    const lifetimeMs = (this.options.maxLifetimeS ?? 30 * 60) * 1000;
    let best: WireConnection | null = null;
    for (const c of this.conns) {
      if (c.usable && Date.now() - c.openedAt > lifetimeMs) this.retire(c);
      if (c.usable && (!best || c.pending < best.pending)) best = c;
    }
    if (best && best.pending === 0) return Promise.resolve(best);
    if (this.size < this.options.max) return this.open();
    if (best) return Promise.resolve(best);
    return Promise.race(this.opening);
  }

  private open(): Promise<WireConnection> {
    const attempt = (async () => {
      const wait = this.failures ? this.failedAt + this.options.backoff(this.failures) * 1000 - Date.now() : 0;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        const conn = await WireConnection.open(this.target, this.options.connectTimeoutS * 1000);
        this.failures = 0;
        this.adopt(conn);
        return conn;
      } catch (err) {
        this.failures++;
        this.failedAt = Date.now();
        throw err;
      }
    })();
    this.opening.add(attempt);
    attempt.then(
      () => this.opening.delete(attempt),
      () => this.opening.delete(attempt),
    );
    return attempt;
  }

  private adopt(conn: WireConnection): void {
    if (this.ended) {
      void conn.end(0);
      return;
    }
    this.conns.add(conn);
    conn.onClose = () => {
      this.conns.delete(conn);
      clearTimeout(this.idleTimers.get(conn));
      this.idleTimers.delete(conn);
    };
    conn.onIdle = () => {
      clearTimeout(this.idleTimers.get(conn));
      if (conn.retiring) {
        void conn.end(0);
        return;
      }
      const timer = setTimeout(
        () => {
          this.idleTimers.delete(conn);
          if (!conn.pending) this.retire(conn);
        },
        (this.options.idleTimeoutS ?? 60) * 1000,
      );
      timer.unref();
      this.idleTimers.set(conn, timer);
    };
    conn.onIdle();
  }

  /** No new batches; ends once idle. */
  private retire(conn: WireConnection): void {
    conn.retiring = true;
    this.conns.delete(conn);
    if (!conn.pending) void conn.end(0);
  }
}
