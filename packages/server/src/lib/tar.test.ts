import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTar, TAR_END, tarHeader, tarPadding } from './tar.js';

const chunks = async function* (bytes: Buffer, size: number) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
};

function archive(files: Array<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data] of files) {
    parts.push(tarHeader({ name, type: 'file', size: data.length, mode: 0o600, mtime: 1_700_000_000 }), data, tarPadding(data.length));
  }
  parts.push(TAR_END);
  return Buffer.concat(parts);
}

describe('tar', () => {
  const long = `storage/objects/${'b'.repeat(63)}/0b/0b5c2a4e-8f7d-4c1e-9a3b-2d6e8f0a1b2c`; // > 100 bytes: ustar's prefix field
  const files: Array<[string, Buffer]> = [
    ['plinth-backup.json', Buffer.from('{"format":"plinth-backup"}')],
    [long, Buffer.alloc(1500, 7)],
    ['empty', Buffer.alloc(0)],
  ];

  it('reads back what it wrote, whatever the chunk sizes, and GNU tar reads it too', async () => {
    const bytes = archive(files);
    for (const size of [1, 511, 512, 4096, bytes.length]) {
      const got: Array<[string, Buffer]> = [];
      for await (const e of readTar(chunks(bytes, size))) {
        const body: Buffer[] = [];
        for await (const c of e.body) body.push(c);
        got.push([e.name, Buffer.concat(body)]);
      }
      expect(got).toEqual(files);
    }
    const dir = mkdtempSync(join(tmpdir(), 'plinth-tar-'));
    try {
      writeFileSync(join(dir, 'a.tar'), bytes);
      expect(
        execFileSync('tar', ['tf', join(dir, 'a.tar')], { encoding: 'utf8' })
          .trim()
          .split('\n'),
      ).toEqual(files.map(([n]) => n));
      execFileSync('tar', ['xf', join(dir, 'a.tar'), '-C', dir]);
      expect(readFileSync(join(dir, long))).toEqual(files[1][1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('skips a body left unread, and refuses a damaged or truncated archive', async () => {
    const names: string[] = [];
    for await (const e of readTar(chunks(archive(files), 700))) names.push(e.name); // bodies never read
    expect(names).toEqual(files.map(([n]) => n));
    const damaged = archive(files);
    damaged[10] ^= 0xff;
    await expect(async () => {
      for await (const _ of readTar(chunks(damaged, 512))) void _;
    }).rejects.toThrow(/wrong checksum/);
    const truncated = archive(files).subarray(0, 1200);
    await expect(async () => {
      for await (const e of readTar(chunks(truncated, 512))) for await (const _ of e.body) void _;
    }).rejects.toThrow(/truncated/);
  });
});
