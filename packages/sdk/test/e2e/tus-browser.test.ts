import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../server/test/chromium.js';
import { type E2eServer, startServer } from './server.js';

// A large resumable upload from a browser tab with tus-js-client (Supabase's documented client
// for /storage/v1/upload/resumable): a Blob of PLINTH_TUS_BROWSER_MIB MiB made in the page in
// 1 MiB pieces, sent in one PATCH; the server drops every connection when about 40 % has gone;
// the client asks HEAD and goes on from the stored offset (one upload, never restarted), and the
// stored object has the Blob's size and SHA-256. 256 MiB by default (about 25 s on this 2-core
// machine). 512 MiB (issue 36's size, PLINTH_TUS_BROWSER_MIB=512) does not pass here yet: the
// tab's first PATCH fails with no answer before the server stores a byte, in one PATCH and in
// 32 MiB ones alike, while 256 MiB goes through; not yet understood (the tab's Blob store?).

const MIB = 2 ** 20;
const SIZE_MIB = Number(process.env.PLINTH_TUS_BROWSER_MIB ?? 256);
const SIZE = SIZE_MIB * MIB;

/** Byte j of piece k (1 MiB each) of the generated file: the page and this test make the same bytes. */
function piece(k: number): Uint8Array {
  const p = new Uint8Array(MIB);
  for (let j = 0; j < MIB; j++) p[j] = (j * 31 + k * 7 + (j >> 12)) & 255;
  return p;
}

declare global {
  interface Window {
    tus: typeof import('tus-js-client');
    tusRun: {
      sent: number;
      done: boolean;
      error: string | null;
      url: string | null;
    };
  }
}

let s: E2eServer;
let pages: Server;
let app: string;
let browser: Browser;
const userId = randomUUID();
let token: string;

beforeAll(async () => {
  s = await startServer({ cors_origins: ['http://127.0.0.1:*'] }, { env: { STORAGE_MAX_FILE_SIZE: String(SIZE + MIB) } });
  const bucket = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/buckets',
    headers: s.t.as.service,
    payload: { name: 'videos' },
  });
  expect(bucket.statusCode, bucket.body).toBe(201);
  const res = await s.t.sql(`create policy "own folder" on storage.objects for all to authenticated
    using (bucket_id = 'videos' and (storage.foldername(name))[1] = auth.uid()::text)
    with check (bucket_id = 'videos' and (storage.foldername(name))[1] = auth.uid()::text);`);
  expect(res.statusCode, res.body).toBe(200);
  token = await s.t.mintToken(userId);
  const tusJs = readFileSync(createRequire(import.meta.url).resolve('tus-js-client/dist/tus.min.js'));
  pages = createServer((req, res) => {
    if (req.url === '/tus.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(tusJs);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(
      '<!doctype html><html><head><meta charset="utf-8"><title>tus</title><script src="/tus.js"></script></head><body></body></html>',
    );
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  app = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await s?.t.stop();
});

describe('a resumable upload from Chromium with tus-js-client', () => {
  it(`uploads ${SIZE_MIB} MiB through /storage/v1/upload/resumable, survives its connection being cut, and stores every byte`, async () => {
    const context = await browser.newContext();
    const errors: string[] = [];
    const patches: number[] = [];
    let posts = 0;
    try {
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => {
        if (!r.url().includes('/storage/v1/upload/resumable')) return;
        if (r.method() === 'POST') posts++;
        if (r.method() === 'PATCH') patches.push(Number(r.headers()['upload-offset']));
      });
      await page.goto(`${app}/`);
      await page.waitForFunction(() => window.tus !== undefined, undefined, { timeout: 10_000 });
      await page.evaluate(
        ([server, token, apikey, userId, mib]) => {
          // The file, made in 1 MiB pieces (the tab never holds it whole in its heap); `piece` above.
          const parts: Blob[] = [];
          for (let k = 0; k < mib; k++) {
            const p = new Uint8Array(2 ** 20);
            for (let j = 0; j < p.length; j++) p[j] = (j * 31 + k * 7 + (j >> 12)) & 255;
            parts.push(new Blob([p]));
          }
          const file = new Blob(parts, { type: 'video/mp4' });
          window.tusRun = { sent: 0, done: false, error: null, url: null };
          const upload = new window.tus.Upload(file, {
            endpoint: `${server}/storage/v1/upload/resumable`,
            headers: { authorization: `Bearer ${token}`, apikey },
            metadata: { bucketName: 'videos', objectName: `${userId}/movie.mp4`, contentType: 'video/mp4' },
            retryDelays: [0, 500, 1000, 2000, 4000],
            onProgress: (sent) => {
              window.tusRun.sent = sent;
            },
            onSuccess: () => {
              window.tusRun.done = true;
              window.tusRun.url = upload.url;
            },
            onError: (e) => {
              window.tusRun.error = String(e);
            },
          });
          upload.start();
        },
        [s.url, token, s.publicKey, userId, SIZE_MIB] as const,
      );
      // About 40 % sent: every connection of the server is dropped (the tab's PATCH with them).
      await expect
        .poll(() => page.evaluate((cut) => window.tusRun.error ?? window.tusRun.sent > cut, 0.4 * SIZE), { timeout: 120_000 })
        .toBe(true);
      s.t.app.server.closeAllConnections();
      await expect
        .poll(() => page.evaluate(() => window.tusRun.done || window.tusRun.error), { timeout: 300_000, interval: 500 })
        .toBe(true);
      expect(await page.evaluate(() => window.tusRun.error)).toBeNull();

      // One upload: created once, resumed from a stored offset (not from 0) after the cut.
      expect(posts).toBe(1);
      expect(patches[0]).toBe(0);
      expect(patches.some((offset) => offset > 0)).toBe(true);

      const expected = createHash('sha256');
      for (let k = 0; k < SIZE_MIB; k++) expected.update(piece(k));
      const got = createHash('sha256');
      let size = 0;
      const res = await fetch(`${s.url}/api/v1/storage/object/videos/${userId}/movie.mp4`, { headers: s.t.as.service });
      expect(res.status).toBe(200);
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        got.update(chunk);
        size += chunk.length;
      }
      expect(size).toBe(SIZE);
      expect(got.digest('hex')).toBe(expected.digest('hex'));
      // Nothing is left of the upload under way.
      expect((await s.t.db.query('select 1 from storage.uploads')).rows).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 600_000);
});
