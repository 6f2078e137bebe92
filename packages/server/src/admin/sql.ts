import { Type } from '@sinclair/typebox';
import { type Db, DbError, dbErrorKind } from '../db/index.js';
import { ApiError } from '../http/index.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encodeRunnerAnswer } from './sql-json.js';

const MAX_RESULT_ROWS = 1000;
/**
 * Who the runner's SQL runs as (migration 0003): owns public, reads `users` (found through
 * the search_path, as the spec's `select … from users` expects), never a password or token
 * hash. docs/security.md says what this does and does not protect against.
 */
export const SQL_RUNNER_ROLE = { role: 'plinth_sql', searchPath: 'public, auth' } as const;
const DDL = /^(CREATE|ALTER|DROP|GRANT|REVOKE|COMMENT|TRUNCATE|SECURITY)/;

export const SqlBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 1_000_000 }),
    params: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

/** OID → type name, read once: results name each column's type. */
async function typeNames(db: Db): Promise<Map<number, string>> {
  const { rows } = await db.query<{ oid: number; typname: string }>('select oid::int as oid, typname from pg_type');
  return new Map(rows.map((r) => [Number(r.oid), r.typname]));
}

export interface SqlRunnerDeps {
  db: Db;
  statementTimeoutMs: number;
  /** Called after a script that changed the schema, so the REST API serves it at once. */
  onSchemaChange: () => Promise<unknown>;
}

type SqlRequest = FastifyRequest<{ Body: { query: string; params?: Array<string | number | boolean | null> } }>;

/** `POST /api/v1/sql` (docs/api.md §4): the SQL runner of the console and the CLI. Mounted by routes.ts. */
export function createSqlRunner(deps: SqlRunnerDeps) {
  let types: Map<number, string> | null = null;
  return async (req: SqlRequest, reply: FastifyReply) => {
    const started = performance.now();
    let results: Awaited<ReturnType<Db['script']>>;
    try {
      results = await deps.db.script(req.body.query, { timeoutMs: deps.statementTimeoutMs, params: req.body.params, as: SQL_RUNNER_ROLE });
    } catch (err) {
      // The caller wrote the statement: PostgreSQL's own message and position, not the API's table.
      if (err instanceof DbError) {
        if (dbErrorKind(err) === 'query_canceled') {
          throw new ApiError('statement_timeout', `The statement ran longer than ${deps.statementTimeoutMs} ms and was cancelled.`);
        }
        throw new ApiError('sql_error', err.message, {
          sqlstate: err.sqlstate,
          position: err.position ?? null,
          detail: err.detail ?? null,
        });
      }
      throw err;
    }
    if (results.some((r) => DDL.test(r.command))) await deps.onSchemaChange();
    if (!types || results.some((r) => r.fields.some((f) => !types?.has(f.dataTypeID)))) types = await typeNames(deps.db);
    const names = types;
    const answer = results.map((r) => ({
      command: r.command,
      rowCount: r.rowCount,
      columns: r.fields.map((f) => ({ name: f.name, type: names.get(f.dataTypeID) ?? String(f.dataTypeID) })),
      rows: r.rows.length > MAX_RESULT_ROWS ? r.rows.slice(0, MAX_RESULT_ROWS) : r.rows,
      truncated: r.rows.length > MAX_RESULT_ROWS,
    }));
    // Written here, not by JSON.stringify: numbers as the REST API sends them (sql-json.ts).
    const text = encodeRunnerAnswer(
      answer,
      results.map((r) => r.fields),
      Math.round(performance.now() - started),
    );
    return reply.type('application/json; charset=utf-8').send(text);
  };
}
