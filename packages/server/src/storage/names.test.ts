import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageServer, storageServer } from '../../test/storage.js';
import { ApiError } from '../http/errors.js';
import { keyPath } from './backends/index.js';
import { decodeName, objectName } from './names.js';

// Names never reach the file system: bytes live under `<bucket>/<uuid>` keys. These properties
// check the rules of names and that, whatever a client sends, nothing lands outside the root.

const nameParts = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('..', '.', '', '/', '\\', '%2e%2e', '%2F', '%00', '\u0000', '\n', 'e\u0301', '\ud800', '名', '😀', '%', '?', '#'),
);
const names = fc
  .array(fc.tuple(nameParts, fc.constantFrom('/', '', '/')), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.map(([part, sep]) => part + sep).join(''));

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

describe('object names', () => {
  it('objectName accepts exactly the valid names, in NFC, and refuses the rest with invalid_object_name', () => {
    fc.assert(
      fc.property(names, (raw) => {
        let name: string;
        try {
          name = objectName(raw);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).code).toBe('invalid_object_name');
          return;
        }
        expect(name).toBe(raw.normalize('NFC'));
        const bytes = Buffer.byteLength(name);
        expect(bytes).toBeGreaterThanOrEqual(1);
        expect(bytes).toBeLessThanOrEqual(1024);
        expect(name.startsWith('/')).toBe(false);
        expect(name).not.toMatch(/[\u0000-\u001f\u007f-\u009f\\]/);
        for (const seg of name.split('/')) expect(['', '.', '..']).not.toContain(seg);
        expect(Buffer.from(name, 'utf8').toString('utf8')).toBe(name); // no lone surrogate
      }),
      { numRuns: 2000 },
    );
  });

  it('decodeName never throws anything but invalid_object_name for any percent-encoding', () => {
    const encoded = fc.array(
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`),
      ),
      {
        maxLength: 20,
      },
    );
    fc.assert(
      fc.property(encoded, (parts) => {
        try {
          decodeName(parts.join(''));
        } catch (err) {
          expect((err as ApiError).code).toBe('invalid_object_name');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('keyPath resolves only service-made keys, always inside the root', () => {
    const root = resolve('/srv/plinth/storage/objects');
    fc.assert(
      fc.property(
        fc.oneof(
          names,
          fc.uuid().map((u) => `avatars/${u}`),
          fc.tuple(names, fc.uuid()).map(([b, u]) => `${b}/${u}`),
        ),
        (key) => {
          let path: string;
          try {
            path = keyPath(root, key);
          } catch {
            return;
          }
          expect(path.startsWith(root + sep)).toBe(true);
          expect(relative(root, path).split(sep)).toHaveLength(3);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('names over HTTP (disk backend)', () => {
  let s: StorageServer;
  beforeAll(async () => {
    s = await storageServer('disk');
    await s.bucket('b');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('random names, raw or percent-encoded: never a 5xx, what is stored reads back, nothing outside the root', async () => {
    const encodings = fc.constantFrom('segments', 'whole', 'raw');
    const encode = (name: string, how: string) =>
      how === 'segments' ? name.split('/').map(encodeURIComponent).join('/') : how === 'whole' ? encodeURIComponent(name) : encodeURI(name);
    const stored = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(names, encodings, async (name, how) => {
        let path: string;
        try {
          path = encode(name, how);
        } catch {
          return; // a lone surrogate cannot even be put in a URL by a client
        }
        const body = `body of ${JSON.stringify(name)}`;
        const res = await s.upload('b', path, body, { ...s.as.service, 'x-upsert': 'true' });
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode === 201) stored.set(res.json().name, body);
        else expect([400, 404]).toContain(res.statusCode);
      }),
      { numRuns: 300 },
    );
    expect(stored.size).toBeGreaterThan(0);
    for (const [name, body] of stored) {
      const got = await s.get(`/api/v1/storage/object/b/${name.split('/').map(encodeURIComponent).join('/')}`, s.as.service);
      expect(got.body).toBe(body);
    }
    // Every file of the data dir outside the database is a key-shaped file under storage/objects.
    const root = join(s.config.dataDir, 'storage');
    const files = walk(s.config.dataDir).filter((f) => !f.includes(`${sep}pgdata${sep}`) && !f.startsWith(root + sep));
    expect(files.map((f) => relative(s.config.dataDir, f)).filter((f) => f !== 'keys.json' && f !== 'plinth.lock')).toEqual([]);
    for (const f of walk(root)) expect(relative(root, f)).toMatch(/^objects\/b\/[0-9a-f]{2}\/[0-9a-f-]{36}$/);
    expect(walk(root)).toHaveLength(stored.size);
  });

  it('random Range, If-None-Match and ?download values on a download: never a 5xx', async () => {
    expect((await s.upload('b', 'ranged.txt', '0123456789', { ...s.as.service, 'x-upsert': 'true' })).statusCode).toBe(201);
    const latin1 = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(latin1, latin1, fc.string({ unit: 'binary', maxLength: 40 }), async (range, etag, download) => {
        const res = await s.get(`/api/v1/storage/object/b/ranged.txt?download=${encodeURIComponent(download.replace(/\p{Cs}/gu, ''))}`, {
          ...s.as.service,
          range,
          'if-none-match': etag,
        });
        expect([200, 206, 304, 416]).toContain(res.statusCode);
      }),
      { numRuns: 300 },
    );
  });
});
