/**
 * While the database is down every part of an instance notices (the outbox's poll each second,
 * /health, the schema and settings reloads, the storage sweep, requests): each would log its
 * own warning with a stack, every second. A pino hook folds every warning or error whose `err`
 * is a DbUnavailableError into one line naming the database and the cause, at most once a
 * minute, without a stack; the rest of the log is untouched.
 */
import type { LogFn } from 'pino';

/** How often the outage line may repeat while it lasts. */
export const OUTAGE_LOG_INTERVAL_MS = 60_000;

const WARN = 40;

/**
 * The `hooks.logMethod` of the server's loggers.
 * @example pino({ hooks: { logMethod: outageLogHook() } })
 */
export function outageLogHook(intervalMs = OUTAGE_LOG_INTERVAL_MS, now = () => Date.now()) {
  let last = Number.NEGATIVE_INFINITY;
  return function logMethod(this: unknown, args: Parameters<LogFn>, method: LogFn, level: number): void {
    const [first, message] = args as unknown[];
    const err =
      first && typeof first === 'object' ? (first as { err?: { name?: string; message?: string; reason?: string } }).err : undefined;
    if (level < WARN || err?.name !== 'DbUnavailableError') {
      method.apply(this, args);
      return;
    }
    const at = now();
    if (at - last < intervalMs) return;
    last = at;
    const what = typeof message === 'string' ? ` (${message})` : '';
    method.apply(this, [
      { code: 'database_unavailable', reason: err.reason ?? err.message },
      `${err.message}${what}; retrying, and this warning repeats at most once a minute while it lasts`,
    ] as unknown as Parameters<LogFn>);
  };
}
