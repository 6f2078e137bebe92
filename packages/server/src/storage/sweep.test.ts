import { randomUUID } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type StorageServer, storageServer } from '../../test/storage.js';
import { diskTempFiles } from './backends/index.js';

// What crashes and SQL leave behind is collected: bytes no row names (older than the grace
// period), keys queued by deletes made in SQL, abandoned temporary files.

describe.each(BACKENDS)('the sweep on the %s backend', (kind) => {
  let s: StorageServer;
  beforeAll(async () => {
    s = await storageServer(kind);
    await s.bucket('b');
  });
  afterAll(async () => {
    await s?.stop();
  });
  /** Keys waiting in storage.garbage (read as the server: the SQL runner's role has no access). */
  const queued = async () => Number((await s.db.query<{ n: number }>('select count(*)::int as n from storage.garbage')).rows[0].n);

  it('deletes orphaned bytes once they are older than the grace period, never bytes a row names', async () => {
    expect((await s.upload('b', 'kept.txt', 'kept', s.as.service)).statusCode).toBe(201);
    const orphan = `b/${randomUUID()}`;
    // What a crash between the rename and the commit leaves: bytes without a row.
    await s.storage.backend.put(orphan, Readable.from([Buffer.from('orphan')]), { contentType: 'text/plain' });
    // Stored image transforms (image-cache.ts) live as long as the upload they were made from.
    const { rows } = await s.db.query<{ key: string }>(
      `select bucket_id || '/' || version as key from storage.objects where name = 'kept.txt'`,
    );
    const kept = rows[0].key;
    const keptVariant = `${kept}.t0123456789abcdef`;
    const orphanVariant = `${orphan}.tfedcba9876543210`;
    for (const key of [keptVariant, orphanVariant])
      await s.storage.backend.put(key, Readable.from([Buffer.from('pixels')]), { contentType: 'image/webp' });
    const live = await s.storedKeys();
    expect(live).toEqual(expect.arrayContaining([orphan, keptVariant, orphanVariant]));

    expect(await s.storage.sweeper.sweep(true)).toMatchObject({ orphans: 0 }); // still young: it may be about to be committed
    expect(await s.storedKeys()).toEqual(live);
    s.clock.advance(2 * 3600_000);
    expect(await s.storage.sweeper.sweep(true)).toMatchObject({ orphans: 2 });
    expect(await s.storedKeys()).toEqual(live.filter((k) => k !== orphan && k !== orphanVariant));
    expect((await s.get('/api/v1/storage/object/b/kept.txt', s.as.service)).body).toBe('kept');
  });

  it('deletes the bytes of rows deleted in SQL (queued by the trigger in the same transaction)', async () => {
    expect((await s.upload('b', 'sql/one.txt', '1', s.as.service)).statusCode).toBe(201);
    expect((await s.upload('b', 'sql/two.txt', '2', s.as.service)).statusCode).toBe(201);
    const before = (await s.storedKeys()).length;
    const rolledBack = await s.sql(`begin; delete from storage.objects where name like 'sql/%'; rollback;`);
    expect(rolledBack.statusCode, rolledBack.body).toBe(200);
    expect(await queued()).toBe(0);
    expect((await s.sql(`delete from storage.objects where name like 'sql/%'`)).statusCode).toBe(200);
    expect(await queued()).toBe(2);
    const report = await s.storage.sweeper.sweep(true);
    expect(report?.garbage).toBe(2);
    expect(await s.storedKeys()).toHaveLength(before - 2);
    expect(await queued()).toBe(0);
  });

  it('runs on one instance per interval', async () => {
    s.clock.advance(11 * 60_000);
    expect(await s.storage.sweeper.sweep()).not.toBeNull();
    expect(await s.storage.sweeper.sweep()).toBeNull();
    s.clock.advance(11 * 60_000);
    expect(await s.storage.sweeper.sweep()).not.toBeNull();
  });

  it('removes what uploads abandoned a day ago left (temporary files; multipart uploads where S3 lists them)', async () => {
    if (kind === 's3') {
      // s3rver cannot list unfinished multipart uploads: the sweep goes on without them.
      s.clock.advance(11 * 60_000);
      expect(await s.storage.sweeper.sweep()).toMatchObject({ incomplete: 0 });
      return;
    }
    const tmp = join(s.config.dataDir, 'storage', 'tmp');
    writeFileSync(join(tmp, 'stale.part'), 'half an upload');
    writeFileSync(join(tmp, 'fresh.part'), 'an upload under way');
    const old = new Date(s.clock.now() - 25 * 3600_000);
    utimesSync(join(tmp, 'stale.part'), old, old);
    s.clock.advance(11 * 60_000);
    expect(await s.storage.sweeper.sweep()).toMatchObject({ incomplete: 1 });
    expect(await diskTempFiles(join(s.config.dataDir, 'storage'))).toEqual(['fresh.part']);
  });
});
