/** Response stage: status, headers and the JSON text PostgreSQL built, sent as is. */
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../http/index.js';
import type { Outcome } from '../execute.js';
import type { Plan } from '../plan/index.js';
import type { StageTimer } from './timing.js';

export { StageTimer } from './timing.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * `Content-Range` of a list (PostgREST's form): `0-9/250`, `0-9/*` without a count, and
 * `*\/250` for an empty page.
 * @example contentRange(20, 10, 250) // '20-29/250'
 */
export function contentRange(offset: number, rows: number, total: number | null): string {
  const of = total === null ? '*' : String(total);
  return rows === 0 ? `*/${of}` : `${offset}-${offset + rows - 1}/${of}`;
}

function notFound(plan: Plan): ApiError {
  return new ApiError('not_found', `No row of "${plan.table.name}" with that ${plan.table.pk[0] ?? 'key'} is visible to you.`);
}

/**
 * Sends the outcome: 200 lists, rows and function results, 201 creates, 204 for return=minimal
 * on update and delete and for a function returning void, 404 `not_found` for a `/{pk}` that
 * matched nothing.
 * @example respond(reply, plan, outcome, timer)
 */
export function respond(reply: FastifyReply, plan: Plan, outcome: Outcome, timer: StageTimer): FastifyReply {
  if (plan.single && outcome.rows === 0 && plan.kind !== 'insert' && plan.kind !== 'rpc') throw notFound(plan);
  let status = 200;
  let body = outcome.body;
  if (plan.kind === 'insert') status = 201;
  // An upsert with ignore-duplicates that skipped its one row: no body, as with return=minimal
  // (a 204 would make every typed client's create `T | undefined`).
  if (plan.kind === 'insert' && plan.single && outcome.rows === 0) body = null;
  // A function returning void answers like a write with return=minimal.
  if (plan.kind === 'rpc' && plan.fn.returns.kind === 'void') body = null;
  if (body === null && plan.kind !== 'insert') status = 204;
  const list = (plan.kind === 'read' || plan.kind === 'rpc') && !plan.single;
  if (list) reply.header('content-range', contentRange(plan.offset, outcome.rows, outcome.total));
  timer.lap('response');
  reply.code(status).header('server-timing', timer.header());
  if (body === null) return reply.send();
  return reply.type(JSON_TYPE).send(body);
}
