import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { readTar } from '../lib/index.js';

// The management routes the console's backup page uses (docs/api.md "Backups").
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.stop());

const post = () => t.app.inject({ method: 'POST', url: '/api/v1/backups', headers: t.as.service });
const list = () => t.app.inject({ url: '/api/v1/backups', headers: t.as.service });

describe('backups of the embedded project', () => {
  it('makes one, lists it, downloads it (a Plinth backup), keeps the last five', async () => {
    const made = await post();
    expect(made.statusCode, made.body).toBe(201);
    const body = made.json();
    expect(body).toMatchObject({
      name: expect.stringMatching(/^plinth-backup-\d{8}-\d{6}-\d{3}\.tar\.gz$/),
      storage: { backend: 'disk', files: 0, bytes: 0 },
    });
    expect((await list()).json()).toEqual([{ name: body.name, size: body.size, created_at: expect.any(String) }]);

    const file = await t.app.inject({ url: `/api/v1/backups/${body.name}`, headers: t.as.service });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/gzip');
    expect(file.headers['content-disposition']).toBe(`attachment; filename="${body.name}"`);
    const entries: string[] = [];
    let manifest = '';
    const archive = gunzipSync(file.rawPayload);
    for await (const e of readTar(
      (async function* () {
        yield archive;
      })(),
    )) {
      entries.push(e.name);
      if (e.name === 'plinth-backup.json') for await (const c of e.body) manifest += c;
    }
    expect(entries.slice(0, 2)).toEqual(['plinth-backup.json', 'pgdata.tar']);
    expect(JSON.parse(manifest)).toMatchObject({ format: 'plinth-backup', version: 1, database: 'pglite' });

    for (let i = 0; i < 5; i++) expect((await post()).statusCode).toBe(201);
    const kept = (await list()).json() as Array<{ name: string }>;
    expect(kept).toHaveLength(5);
    expect(kept.map((b) => b.name)).not.toContain(body.name); // the oldest went
    expect([...kept.map((b) => b.name)].sort().reverse()).toEqual(kept.map((b) => b.name)); // newest first
  });

  it('answers 404 for a name not in the list, and refuses the public key', async () => {
    for (const name of ['plinth-backup-20260101-000000-000.tar.gz', '..%2Fkeys.json', 'keys.json']) {
      const res = await t.app.inject({ url: `/api/v1/backups/${name}`, headers: t.as.service });
      expect([res.statusCode, res.json().code]).toEqual([404, 'not_found']);
    }
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/backups', headers: t.as.anon })).statusCode).toBe(403);
    expect((await t.app.inject({ url: '/api/v1/backups' })).statusCode).toBe(401);
  });
});
