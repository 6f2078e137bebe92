import type { SavedQuery } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Db, DbError, dbErrorKind } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, isoSql, isUuid } from '../lib/index.js';

// Saved queries of the SQL runner (docs/api.md "Saved queries"): named scripts in the project's
// own database (plinth.saved_queries, migration 0100), read and written only here, as the
// server's connection; the runner's role cannot see them.

const COLUMNS = `id, name, query, ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at`;
/** How many a project keeps: a list the console shows whole. */
export const MAX_SAVED_QUERIES = 500;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Query = Type.String({ minLength: 1, maxLength: 1_000_000 });
export const SavedQueryBody = Type.Object({ name: Name, query: Query }, { additionalProperties: false });
export const SavedQueryPatch = Type.Object(
  { name: Type.Optional(Name), query: Type.Optional(Query) },
  { additionalProperties: false, minProperties: 1 },
);
export const SavedQueryParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export type { SavedQuery };

const notFound = () => new ApiError('not_found', 'No saved query with this id.');

/** A name as stored: trimmed, and not empty once trimmed. */
function nameOf(raw: string): string {
  const name = raw.trim();
  if (!name) throw new ApiError('invalid_value', 'name must not be blank.', [{ field: 'name', message: 'must not be blank' }]);
  return name;
}

/**
 * Another saved query has this name: 409, the name is the client's to change. What the error
 * is comes from db/errors.ts (the one home of SQLSTATEs); the name's constraint is ours to name.
 */
function taken(err: unknown, name: string): never {
  if (err instanceof DbError && dbErrorKind(err) === 'unique_violation' && err.constraint === 'saved_queries_name_key') {
    throw new ApiError('conflict', `A saved query is already named "${name}".`, { constraint: 'saved_queries_name_key', field: 'name' });
  }
  throw err;
}

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * `GET|POST /api/v1/sql/saved`, `PATCH|DELETE /api/v1/sql/saved/:id`, mounted by routes.ts
 * behind the management guard.
 * @example const saved = createSavedQueries({ db, clock }); app.get('/api/v1/sql/saved', { onRequest: guards.manage }, saved.list)
 */
export function createSavedQueries(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** Every saved query, by name. */
    async list(): Promise<SavedQuery[]> {
      const { rows } = await db.query<SavedQuery>(`select ${COLUMNS} from plinth.saved_queries order by lower(name), name`);
      return rows;
    },

    async create(req: FastifyRequest<{ Body: { name: string; query: string } }>, reply: FastifyReply) {
      const name = nameOf(req.body.name);
      const now = new Date(clock.now());
      try {
        const { rows } = await db.query<SavedQuery>(
          `insert into plinth.saved_queries (name, query, created_at, updated_at)
           select $1, $2, $3, $3 where (select count(*) from plinth.saved_queries) < ${MAX_SAVED_QUERIES}
           returning ${COLUMNS}`,
          [name, req.body.query, now],
        );
        if (!rows[0]) {
          throw new ApiError('invalid_request', `A project keeps at most ${MAX_SAVED_QUERIES} saved queries: delete some first.`);
        }
        return reply.code(201).send(rows[0]);
      } catch (err) {
        taken(err, name);
      }
    },

    async update(req: FastifyRequest<{ Params: { id: string }; Body: { name?: string; query?: string } }>) {
      if (!isUuid(req.params.id)) throw notFound();
      const name = req.body.name === undefined ? null : nameOf(req.body.name);
      try {
        const { rows } = await db.query<SavedQuery>(
          `update plinth.saved_queries set name = coalesce($2, name), query = coalesce($3, query), updated_at = $4
           where id = $1 returning ${COLUMNS}`,
          [req.params.id, name, req.body.query ?? null, new Date(clock.now())],
        );
        if (!rows[0]) throw notFound();
        return rows[0];
      } catch (err) {
        taken(err, name ?? '');
      }
    },

    async remove(req: IdRequest, reply: FastifyReply) {
      if (!isUuid(req.params.id)) throw notFound();
      const { rows } = await db.query<{ id: string }>('delete from plinth.saved_queries where id = $1 returning id', [req.params.id]);
      if (!rows[0]) throw notFound();
      return reply.code(204).send();
    },
  };
}
