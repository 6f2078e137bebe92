import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '@plinth/shared';
import { type DbErrorContext, DbError, dbErrorAnswer } from '../db/index.js';

/**
 * An error meant for the client: a stable code, a public message, optional details.
 * The cause (if any) is logged, never sent.
 * @example throw new ApiError('table_not_found', 'No table "todos" in the public schema.');
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown; status?: number; headers?: Record<string, string> },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'ApiError';
    this.status = options?.status ?? ERROR_STATUS[code];
    this.headers = options?.headers;
  }
  readonly headers?: Record<string, string>;

  toBody(): ErrorBody {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/**
 * A database error as the API error of db/errors.ts's table (the same in every area); any
 * other error, and a database error that is a fault of the server's (null in the table), is
 * returned as it is, for the error handler to log and answer 500.
 * @example catch (err) { throw fromDbError(err, { relation: { name: 'todos', kind: 'table' }, writes: true }); }
 */
export function fromDbError(err: unknown, ctx?: DbErrorContext): unknown {
  if (!(err instanceof DbError)) return err;
  const answer = dbErrorAnswer(err, ctx);
  if (!answer) return err;
  const headers = answer.retryAfter === undefined ? undefined : { 'retry-after': String(answer.retryAfter) };
  return new ApiError(answer.code, answer.message, answer.details, { cause: err, headers });
}
