import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3, type LocalS3 } from '../../../test/s3.js';
import { type SupabaseStorageServer, supabaseStorageServer } from '../../../test/supabase-storage.js';

// What /storage/v1 adds that moves bytes (multipart uploads, moves and copies across buckets,
// signed uploads, emptying a bucket) on both backends: the bytes arrive, and none are left behind.

describe.each(['disk', 's3'] as const)('on the %s backend', (kind) => {
  let s3: LocalS3 | null = null;
  let s: SupabaseStorageServer;

  beforeAll(async () => {
    s3 = kind === 's3' ? await startS3() : null;
    s = await supabaseStorageServer(s3?.env ?? {});
    for (const b of ['one', 'two']) expect((await s.service.createBucket(b)).error).toBeNull();
  });
  afterAll(async () => {
    await s?.stop();
    await s3?.stop();
  });

  const keys = async () => {
    await s.storage.sweeper.drain();
    const out: string[] = [];
    for await (const k of s.storage.backend.list()) out.push(k.key);
    return out.sort();
  };

  it('a multipart upload, a move and a copy to another bucket, a signed upload, then emptying: the bytes follow the rows', async () => {
    const one = s.service.from('one');
    expect((await one.upload('a.bin', new Blob([Buffer.alloc(300_000, 'a')]))).error).toBeNull();
    expect((await one.copy('a.bin', 'copied.bin', { destinationBucket: 'two' })).error).toBeNull();
    expect((await one.move('a.bin', 'moved.bin', { destinationBucket: 'two' })).error).toBeNull();
    const token = (await s.service.from('two').createSignedUploadUrl('signed.bin')).data?.token as string;
    expect((await s.anon.from('two').uploadToSignedUrl('signed.bin', token, Buffer.alloc(1000, 's'))).error).toBeNull();

    const two = s.service.from('two');
    for (const [name, size] of [
      ['moved.bin', 300_000],
      ['copied.bin', 300_000],
      ['signed.bin', 1000],
    ] as const) {
      const got = await two.download(name);
      expect(got.error, name).toBeNull();
      expect(got.data?.size, name).toBe(size);
    }
    expect((await one.list()).data).toEqual([]);
    // Each object's bytes under its own bucket, and nothing else kept (the moved one's old key collected).
    expect((await keys()).map((k) => k.split('/')[0])).toEqual(['two', 'two', 'two']);

    expect((await s.service.emptyBucket('two')).error).toBeNull();
    expect((await two.list()).data).toEqual([]);
    expect(await keys()).toEqual([]);
  });
});
