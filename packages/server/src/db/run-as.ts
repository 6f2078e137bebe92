/**
 * `Db.runAs` as one batch of wire-protocol messages, the same on PostgreSQL (db/wire-pool.ts)
 * and on PGlite (db/pglite.ts): what a careful hand-written server does, in one round trip.
 *
 *   Bind/Execute  set_config role, request.jwt.claims, request.jwt.claim.sub (local)
 *   Bind/Execute  the request's statement, prepared once per session and role
 *   Bind/Execute  plinth.end_request(role, login): deferred triggers fire, then a changed
 *                 role or session user is refused (42501)
 *   Sync
 *
 * PostgreSQL runs the messages up to a Sync as one implicit transaction: the settings are
 * local to it, an error anywhere skips the rest and rolls it all back, so the role check
 * cannot be skipped by a statement that succeeds, and nothing of a request's settings
 * outlives it. A result is only taken once ReadyForQuery says the transaction is over (idle).
 *
 * Statements are prepared under names of our own (random per session, never reused), at
 * most 200 per session, least recently used closed first: no request pattern grows a
 * backend's memory. A statement whose Parse failed is closed and prepared again next time. A
 * session whose statements were dropped under it (`DEALLOCATE` in SQL a request ran, a script
 * on PGlite's one session, 26000) is reset: all closed, prepared again.
 */
import { randomBytes } from 'node:crypto';
import { type RoleContext, type RunAsResult, runAsUid } from './types.js';
import * as wire from './wire.js';

/**
 * Role and claims for the batch's own transaction (PostgREST's pre-request settings). With its
 * schema: SQL a request ran may have changed the session's search_path before this is planned again.
 */
export const SET_SQL =
  "select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('request.jwt.claims', $2, true), pg_catalog.set_config('request.jwt.claim.sub', $3, true)";
/** The role check (migration 0060), after the statement, inside its transaction. */
export const CHECK_SQL = 'select plinth.end_request($1, $2)';

const TEXT = 25;
const TEXT_ARRAY = 1009;
/** Prepared statements per session, as migration 0030 kept. */
export const MAX_STATEMENTS = 200;

/** SQLSTATE of a prepared statement that is not there (any more). */
export const STATEMENT_GONE = '26000';

/** One request's messages, and what settling it needs to know. */
export interface Batch {
  bytes: Buffer;
  rows: boolean;
  /** Names this batch prepares: forgotten (and closed) if it fails. */
  parsed: string[];
}

/** What one session (a connection) has prepared, and the login it runs as. */
export class Session {
  private readonly prefix = `plinth_${randomBytes(6).toString('hex')}_`;
  private count = 0;
  private fixed: { set: string; check: string } | null = null;
  /** role + statement → name, least recently used first. */
  private readonly statements = new Map<string, string>();
  private closing: string[] = [];

  constructor(
    /** The session user the role check expects after the statement. */
    readonly login: string,
    private readonly max = MAX_STATEMENTS,
  ) {}

  private name(): string {
    return this.prefix + (this.count++).toString(36);
  }

  /**
   * The messages of one `runAs`: values of the statement are `$1[1]`, `$1[2]`, … of one `text[]`.
   * @example const b = session.batch({ role: 'anon', claims: '{}' }, 'select …', [], true);
   */
  batch(ctx: RoleContext, text: string, params: string[], rows: boolean): Batch {
    const parsed: string[] = [];
    // A plan per role: row-level security is applied when a statement is planned, for the
    // role it is planned as, so one statement shared by roles would be planned again at each switch.
    const key = `${ctx.role}\u0000${text}`;
    let name = this.statements.get(key);
    let parseStatement = false;
    if (name) {
      this.statements.delete(key);
    } else {
      name = this.name();
      parseStatement = true;
      if (this.statements.size >= this.max) {
        const [oldest, old] = this.statements.entries().next().value as [string, string];
        this.statements.delete(oldest);
        this.closing.push(old);
      }
    }
    this.statements.set(key, name);
    // Closes first: nothing before them can fail and skip them (batches before this one, which
    // may still use them, are answered first).
    const parts = this.closing.map(wire.closeStatement);
    this.closing = [];
    if (!this.fixed) {
      this.fixed = { set: this.name(), check: this.name() };
      parts.push(wire.parse(this.fixed.set, SET_SQL, [TEXT, TEXT, TEXT]), wire.parse(this.fixed.check, CHECK_SQL, [TEXT, TEXT]));
      parsed.push(this.fixed.set, this.fixed.check);
    }
    parts.push(wire.bind(this.fixed.set, [ctx.role, ctx.claims, runAsUid(ctx) ?? '']), wire.EXECUTE);
    if (parseStatement) {
      parts.push(wire.parse(name, text, [TEXT_ARRAY]));
      parsed.push(name);
    }
    parts.push(wire.bind(name, [wire.textArray(params)]), wire.EXECUTE);
    parts.push(wire.bind(this.fixed.check, [ctx.role, this.login]), wire.EXECUTE, wire.SYNC);
    return { bytes: Buffer.concat(parts), rows, parsed };
  }

  /**
   * After a batch failed: the statements it meant to prepare past the `parses` that
   * succeeded do not exist; a statement gone under us (26000) means any may be gone.
   */
  failed(batch: Batch, err: unknown, parses: number): void {
    if ((err as { code?: string })?.code === STATEMENT_GONE) {
      this.reset();
      return;
    }
    if (parses >= batch.parsed.length) return;
    const gone = new Set(batch.parsed.slice(parses));
    if (this.fixed && (gone.has(this.fixed.set) || gone.has(this.fixed.check))) {
      this.closing.push(this.fixed.set, this.fixed.check);
      this.fixed = null;
    }
    for (const [key, name] of this.statements) {
      if (gone.has(name)) {
        this.statements.delete(key);
        this.closing.push(name);
      }
    }
  }

  /** Forgets (and closes, with the next batch) every statement of this session. */
  reset(): void {
    if (this.fixed) this.closing.push(this.fixed.set, this.fixed.check);
    this.fixed = null;
    for (const name of this.statements.values()) this.closing.push(name);
    this.statements.clear();
  }
}

/**
 * Reads the reply of one batch, message by message, until its ReadyForQuery. The statement
 * is the second of three; its row (or, without rows, its command tag) is the result.
 */
export class Reply {
  private completed = 0;
  private row: Buffer | null = null;
  private count = 0;
  /** ParseCompletes seen: the batch's first `parses` statements exist. */
  parses = 0;
  /** The first error of the batch: PostgreSQL skipped the rest and rolled back. */
  error: (Error & wire.PgErrorFields) | null = null;
  /** ReadyForQuery's transaction status: `I` idle, `T` in a transaction block, `E` failed one. */
  status: string | null = null;

  constructor(private readonly rows: boolean) {}

  /** Takes one message; true once the batch is over. */
  take(m: wire.BackendMessage): boolean {
    switch (m.type) {
      case wire.MSG.parseComplete:
        this.parses++;
        return false;
      case wire.MSG.dataRow:
        if (this.completed === 1 && this.rows) this.row = m.body;
        return false;
      case wire.MSG.commandComplete:
        if (++this.completed === 2 && !this.rows) this.count = wire.tagCount(m.body);
        return false;
      case wire.MSG.error:
        this.error ??= wire.errorOf(m.body);
        return false;
      case wire.MSG.readyForQuery:
        this.status = String.fromCharCode(m.body[0]);
        return true;
      default:
        // ParseComplete, BindComplete, CloseComplete, notices, parameter status, notifications.
        return false;
    }
  }

  /** The result, or the batch's error. Only a transaction that ended counts. */
  result(): RunAsResult {
    if (this.error) throw this.error;
    if (this.status !== 'I' || this.completed !== 3) {
      throw Object.assign(new Error(`runAs: the batch ended in state ${this.status} after ${this.completed} of 3 statements`), {
        code: 'PROTOCOL_STATE',
      });
    }
    if (!this.rows) return { body: null, n: this.count, total: null };
    if (!this.row) return { body: null, n: 0, total: null };
    const total = wire.dataRowText(this.row, 2);
    return {
      body: wire.dataRowText(this.row, 0),
      n: Number(wire.dataRowText(this.row, 1) ?? 0),
      total: total === null ? null : Number(total),
    };
  }
}
