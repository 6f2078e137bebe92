import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// On PostgreSQL a backup is pg_dump's (docs/operations.md "Backups"): the routes say so.
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.stop());

describe('backups on PostgreSQL', () => {
  it('answer 409 backups_unavailable, naming pg_dump', async () => {
    for (const res of [
      await t.app.inject({ method: 'POST', url: '/api/v1/backups', headers: t.as.service }),
      await t.app.inject({ url: '/api/v1/backups', headers: t.as.service }),
      await t.app.inject({ url: '/api/v1/backups/plinth-backup-20260101-000000-000.tar.gz', headers: t.as.service }),
    ]) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        code: 'backups_unavailable',
        message: 'Backups through Plinth are of the embedded database; back up PostgreSQL with pg_dump (docs/operations.md, "Backups").',
      });
    }
  });
});
