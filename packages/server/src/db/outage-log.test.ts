import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { outageLogHook } from './outage-log.js';
import { DbError, DbUnavailableError } from './types.js';

describe('the database outage in the log', () => {
  it('is one warning a minute without a stack, whichever part of the instance meets it; other lines pass', () => {
    let now = 0;
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    });
    const log = pino({ level: 'info', hooks: { logMethod: outageLogHook(60_000, () => now) } }, sink);
    const down = new DbUnavailableError(
      'The database at db:5432/app is unavailable: connection refused (ECONNREFUSED).',
      'connection refused',
    );
    for (let second = 0; second < 120; second++) {
      now = second * 1000;
      log.warn({ err: down }, 'outbox run failed; retrying at the next poll');
      log.child({ reqId: `req-${second}` }).warn({ err: down }, 'answering 503 database_unavailable');
      log.error({ err: down }, 'auth: work after the answer failed');
    }
    log.warn({ err: new DbError('duplicate key', '23505') }, 'not an outage');
    log.info('listening');
    const outage = lines.filter((l) => l.code === 'database_unavailable');
    expect(outage.map((l) => l.msg)).toEqual([
      'The database at db:5432/app is unavailable: connection refused (ECONNREFUSED). (outbox run failed; retrying at the next poll); retrying, and this warning repeats at most once a minute while it lasts',
      'The database at db:5432/app is unavailable: connection refused (ECONNREFUSED). (outbox run failed; retrying at the next poll); retrying, and this warning repeats at most once a minute while it lasts',
    ]);
    expect(outage.every((l) => l.level === 40 && l.err === undefined && l.reason === 'connection refused')).toBe(true);
    expect(lines.map((l) => l.msg).slice(-2)).toEqual(['not an outage', 'listening']);
    expect(lines).toHaveLength(4);
  });
});
