import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlinthClient } from '../../src/index.js';
import { type E2eServer, email, startServer } from './server.js';
import { launchChromium } from '../../../server/test/chromium.js';

// client.storage in Debian's Chromium: a page of another origin signs up, uploads the File a
// person picked in an <input type=file>, and reads it back, under an owner policy.

declare global {
  interface Window {
    storagePage: { client: PlinthClient };
  }
}

let s: E2eServer;
let pages: Server;
let app: string;
let browser: Browser;

beforeAll(async () => {
  s = await startServer({ cors_origins: ['http://127.0.0.1:*'] });
  const bucket = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/buckets',
    headers: s.t.as.service,
    payload: { name: 'uploads' },
  });
  expect(bucket.statusCode, bucket.body).toBe(201);
  const res = await s.t.sql(`create policy "own folder" on storage.objects for all to authenticated
    using (bucket_id = 'uploads' and (storage.foldername(name))[1] = auth.uid()::text)
    with check (bucket_id = 'uploads' and (storage.foldername(name))[1] = auth.uid()::text);`);
  expect(res.statusCode, res.body).toBe(200);
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>upload</title>
<script type="module">
  import { createClient } from '${s.url}/sdk/plinth.js';
  window.storagePage = { client: createClient('${s.url}', '${s.publicKey}') };
</script></head><body><label>Photo <input id="file" type="file"></label></body></html>`);
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

describe('storage in Chromium', () => {
  it('uploads the File of an <input type=file>, lists it, downloads it and reads it through a signed URL', async () => {
    const context = await browser.newContext();
    const errors: string[] = [];
    try {
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${app}/`);
      await page.waitForFunction(() => window.storagePage !== undefined, undefined, { timeout: 10_000 });
      const picture = Buffer.from('\x89PNG\r\n\x1a\n not really a png, but its bytes');
      await page.getByLabel('Photo').setInputFiles({ name: 'holiday photo.png', mimeType: 'image/png', buffer: picture });
      const addr = email('browser-storage');
      const out = await page.evaluate(
        async ([addr, server]) => {
          const { client } = window.storagePage;
          const up = await client.auth.signUp({ email: addr, password: 'correct horse battery' });
          const uid = up.data!.user.id;
          const file = (document.getElementById('file') as HTMLInputElement).files![0];
          const files = client.storage.from('uploads');
          const uploaded = await files.upload(`${uid}/${file.name}`, file);
          const listed = await files.list(uid);
          const down = await files.download(`${uid}/${file.name}`);
          const bytes = down.data ? Array.from(new Uint8Array(await down.data.arrayBuffer())) : null;
          const signed = await files.createSignedUrl(`${uid}/${file.name}`, 60);
          // The harness's PUBLIC_URL is not where this server listens: the same path on the real port.
          const viaUrl = signed.data
            ? await (await fetch(signed.data.signedUrl.replace('http://localhost:8080', server))).arrayBuffer()
            : null;
          const other = await files.upload(`someone-else/${file.name}`, file);
          return {
            uid,
            uploaded,
            names: listed.data?.map((e) => e.name),
            type: down.data?.type,
            bytes,
            signedBytes: viaUrl ? Array.from(new Uint8Array(viaUrl)) : null,
            signedUrl: signed.data?.signedUrl,
            other: other.error?.code,
          };
        },
        [addr, s.url] as const,
      );
      expect(out.uploaded.error).toBeNull();
      expect(out.uploaded.data).toMatchObject({ name: `${out.uid}/holiday photo.png`, mime_type: 'image/png', size: picture.length });
      expect(out.names).toEqual(['holiday photo.png']);
      expect(out.type).toBe('image/png');
      expect(Buffer.from(out.bytes!)).toEqual(picture);
      expect(out.other).toBe('rls_violation');
      expect(Buffer.from(out.signedBytes!)).toEqual(picture);
      expect(out.signedUrl).toMatch(/\/api\/v1\/storage\/sign\/uploads\/.*holiday%20photo\.png\?token=/);
      const rows = (await s.t.sql(`select name, owner::text from storage.objects`)).json().results[0].rows;
      expect(rows).toEqual([{ name: `${out.uid}/holiday photo.png`, owner: out.uid }]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
