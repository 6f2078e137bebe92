import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from '../../test/cluster.js';
import { type Plinth, buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';

// A PostgreSQL of its own on a free port, so the test can stop and start it under a running
// Plinth (a fixed port may be taken by any socket of the machine meanwhile).
let pg: PgCluster;

describe('PostgreSQL outage', () => {
  let plinth: Plinth;
  let secret: string;
  beforeAll(async () => {
    pg = await startPgCluster();
    const config = loadConfig({ LOG_LEVEL: 'silent' }, { databaseUrl: pg.url, port: 0 });
    plinth = await buildApp({ config, logger: pino({ level: 'silent' }) });
    secret = plinth.keys.secretKey;
    await plinth.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { authorization: `Bearer ${secret}` },
      payload: { query: 'create table if not exists outage_probe (id int)' },
    });
  }, 60_000);
  afterAll(async () => {
    await pg?.start();
    await plinth?.close();
    await pg?.destroy();
  });

  it('answers 503 database_unavailable within a second while down, and recovers by itself', async () => {
    await pg.stop();
    const t0 = Date.now();
    const res = await plinth.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { authorization: `Bearer ${secret}` },
      payload: { query: 'select 1' },
    });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('database_unavailable');
    const h0 = Date.now();
    const health = await plinth.app.inject({ url: '/health' });
    expect(Date.now() - h0).toBeLessThan(1500);
    expect(health.statusCode).toBe(503);

    await pg.start();
    await expect.poll(async () => (await plinth.app.inject({ url: '/health' })).statusCode, { timeout: 10_000, interval: 200 }).toBe(200);
    const after = await plinth.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { authorization: `Bearer ${secret}` },
      payload: { query: 'select count(*)::int as n from outage_probe' },
    });
    expect(after.statusCode).toBe(200);
  }, 60_000);
});
