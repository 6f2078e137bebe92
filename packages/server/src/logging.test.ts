import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plinth, LOG_REDACT, buildApp } from './app.js';
import { loadConfig } from './config/index.js';
import { type TestDbTarget, freshDbTarget } from '../test/db.js';

// Every log line at the most verbose level, captured while requests carry secrets.
describe('logs never carry secrets', () => {
  let target: TestDbTarget;
  let plinth: Plinth;
  const lines: string[] = [];
  beforeAll(async () => {
    target = await freshDbTarget();
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const config = loadConfig(
      { LOG_LEVEL: 'trace' },
      { dataDir: target.dataDir, databaseUrl: target.databaseUrl, port: 0 },
      target.dataDir,
    );
    plinth = await buildApp({ config, logger: pino({ level: 'trace', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, sink) });
  });
  afterAll(async () => {
    await plinth.close();
    await target.cleanup();
  });

  it('keys, user tokens and passwords in requests do not appear in any log line', async () => {
    const token = (await plinth.tokens.sign({ sub: crypto.randomUUID() }, 3600)).token;
    const secrets = [plinth.keys.secretKey, plinth.keys.publicKey, token, 'hunter2-correct-horse'];
    const send = (headers: Record<string, string>, payload: unknown, url = '/api/v1/sql') =>
      plinth.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
    await send({ authorization: `Bearer ${plinth.keys.secretKey}` }, { query: "select 'ok'" });
    await send({ authorization: `Bearer ${plinth.keys.secretKey}` }, { query: 'select * from nowhere' });
    await send({ apikey: plinth.keys.publicKey, authorization: `Bearer ${token}` }, { query: 'select 1' });
    await send({ apikey: plinth.keys.publicKey }, { email: 'a@example.com', password: 'hunter2-correct-horse' }, '/v1/auth/signin');
    await send({ apikey: plinth.keys.publicKey }, { email: 'a@example.com', password: 'hunter2-correct-horse' }, '/v1/auth/signup');
    await plinth.app.inject({ url: `/api/v1/db/nowhere?apikey=${plinth.keys.publicKey}`, headers: { authorization: `Bearer ${token}` } });
    expect(lines.length).toBeGreaterThan(0);
    const all = lines.join('\n');
    for (const s of secrets) expect(all).not.toContain(s);
  });
});
