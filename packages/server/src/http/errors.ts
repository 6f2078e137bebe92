import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '@plinth/shared';

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
