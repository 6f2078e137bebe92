import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiskBackend } from './disk.js';
import type { StorageBackend } from './types.js';

// The disk backend keeps the descriptors of small files open for the next download (a key's
// bytes never change). What a user would notice if that went wrong: a deleted file still taking
// disk space, descriptors running out, or the wrong bytes.

/** The files this process holds open under `dir` (Linux /proc). */
function openUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {} // closed meanwhile
  }
  return out;
}

/** Polls until `count` files under `dir` are open (a close is asynchronous); fails after 20 s. */
async function openCount(dir: string, count: number): Promise<void> {
  const end = Date.now() + 20_000;
  while (openUnder(dir).length !== count && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  expect(openUnder(dir)).toHaveLength(count);
}
const dirs: string[] = [];
const backends: StorageBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A backend whose idle descriptors stay open for the whole test (only removal or the limit closes them). */
async function backend(openIdleMs = 3_600_000): Promise<{ b: StorageBackend; root: string }> {
  const root = mkdtempSync(join(tmpdir(), 'plinth-disk-'));
  dirs.push(root);
  const b = await createDiskBackend(root, { openIdleMs });
  backends.push(b);
  return { b, root };
}

async function store(b: StorageBackend, body: Buffer): Promise<string> {
  const key = `files/${randomUUID()}`;
  await b.put(key, Readable.from([body]), { contentType: 'application/octet-stream' });
  return key;
}

describe('the disk backend', () => {
  it('reads a small file whole, again and again, from one descriptor it closes when the key is removed', async () => {
    const { b, root } = await backend();
    const body = Buffer.from('hello, files');
    const key = await store(b, body);
    const reads = await Promise.all(Array.from({ length: 8 }, () => b.get(key, undefined, body.length)));
    for (const r of reads) expect(r).toEqual(body);
    expect(await b.get(key, { start: 7, end: 11 }, body.length)).toEqual(Buffer.from('files'));
    expect(openUnder(root)).toHaveLength(1);
    await b.remove([key]);
    await openCount(root, 0);
    expect(await b.get(key, undefined, body.length)).toBeNull();
  });

  it('keeps at most 64 files open, and none once closed', async () => {
    const { b, root } = await backend();
    const keys: string[] = [];
    for (let i = 0; i < 80; i++) keys.push(await store(b, Buffer.from(`file ${i}`)));
    for (const [i, key] of keys.entries()) expect(String(await b.get(key, undefined, `file ${i}`.length))).toBe(`file ${i}`);
    await openCount(root, 64);
    await b.close();
    expect(openUnder(root)).toEqual([]);
  });

  it('closes a descriptor left unused for the idle time (a file another worker deleted frees its space)', async () => {
    const { b, root } = await backend(50);
    const key = await store(b, Buffer.from('x'));
    expect(String(await b.get(key, undefined, 1))).toBe('x');
    await openCount(root, 0);
    expect(String(await b.get(key, undefined, 1))).toBe('x');
  });

  it('streams a file over 1 MiB and closes it after', async () => {
    const { b, root } = await backend();
    const body = Buffer.alloc(1024 * 1024 + 1, 7);
    const key = await store(b, body);
    const got = await b.get(key, undefined, body.length);
    expect(got).toBeInstanceOf(Readable);
    const chunks: Buffer[] = [];
    for await (const c of got as Readable) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
    await openCount(root, 0);
  });
});
