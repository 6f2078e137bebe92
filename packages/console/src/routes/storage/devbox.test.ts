import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../../../../server/test/chromium.js';
import { freePort } from '../../../../server/test/process.js';
import { type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// Review round 3, R12, in Chromium: the console on a plain-http host that is not localhost
// (`http://devbox.test:<port>`, mapped to 127.0.0.1), where browsers send no Sec-Fetch-Site. An
// <img> on another port of that host carries the admin's cookie; it must not load a private
// object. The console's own preview (fetched with X-Plinth-Admin into a blob URL) still shows it.

/** A PNG of `w`×`h` grey pixels. */
function png(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const rows = Buffer.concat(Array.from({ length: h }, () => Buffer.from([0, ...new Array(w).fill(128)])));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

let s: ConsoleServer;
let browser: Browser;
let w: Watched;
let base = '';
let evil: Server;
let evilUrl = '';

beforeAll(async () => {
  const port = await freePort();
  base = `http://devbox.test:${port}`;
  s = await startConsole({ port, env: { PUBLIC_URL: base } });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP devbox.test 127.0.0.1'],
  });
  w = await openPage(await browser.newContext());
  await signIn(w, base);
  await s.t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: s.t.as.service, payload: { name: 'priv' } });
  const up = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/object/priv/alice/secret-37x11.png',
    headers: { ...s.t.as.service, 'content-type': 'image/png' },
    payload: png(37, 11),
  });
  expect(up.statusCode, up.body).toBe(201);
  evil = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><body>
<img id="i" src="${base}/api/v1/storage/object/priv/alice/secret-37x11.png">
<script>
  i.onload = () => (document.title = 'LOADED ' + i.naturalWidth + 'x' + i.naturalHeight);
  i.onerror = () => (document.title = 'refused');
</script></body></html>`);
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilUrl = `http://devbox.test:${(evil.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => evil?.close(r));
  await browser?.close().catch(() => undefined);
  await s?.stop();
});

describe('the console on http://devbox.test (no Sec-Fetch-Site)', () => {
  it('shows an image preview fetched with X-Plinth-Admin into a blob URL', async () => {
    const { page } = w;
    const fetched = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/storage/object/priv/alice/secret-37x11.png', {
      timeout: 60_000,
    });
    await page.goto(`${base}/console/storage/priv?prefix=alice&object=${encodeURIComponent('alice/secret-37x11.png')}`);
    const answer = await fetched;
    const sent = await answer.request().allHeaders();
    expect([answer.status(), sent['x-plinth-admin'], sent['sec-fetch-site']]).toEqual([200, '1', undefined]);
    const img = page.getByRole('img', { name: 'Preview of secret-37x11.png' });
    await expect.poll(() => img.evaluate((e: HTMLImageElement) => `${e.naturalWidth}x${e.naturalHeight}`)).toBe('37x11');
    expect(await img.getAttribute('src')).toMatch(/^blob:/);
    await shot(page, 'storage-preview-devbox');
    w.expectClean();
  });

  it('an <img> on another port of the host does not load the private object through the cookie', async () => {
    const other = await w.page.context().newPage(); // the admin is signed in in this browser
    try {
      // What went over the wire, from Chromium's network layer (the page itself only sees an error).
      const cdp = await other.context().newCDPSession(other);
      await cdp.send('Network.enable');
      // Kept for every request by id: Chromium may report a request's ExtraInfo events before
      // its requestWillBeSent, so nothing is filtered until the end.
      const ids = new Set<string>();
      const sentById = new Map<string, Record<string, string>>();
      const statusById = new Map<string, number>();
      cdp.on('Network.requestWillBeSent', (e) => {
        if (new URL(e.request.url).pathname === '/api/v1/storage/object/priv/alice/secret-37x11.png') ids.add(e.requestId);
      });
      cdp.on('Network.requestWillBeSentExtraInfo', (e) => void sentById.set(e.requestId, e.headers as Record<string, string>));
      cdp.on('Network.responseReceivedExtraInfo', (e) => void statusById.set(e.requestId, e.statusCode));
      const statuses = () => [...ids].flatMap((id) => (statusById.has(id) ? [statusById.get(id) as number] : []));
      await other.goto(`${evilUrl}/`);
      await expect.poll(() => statuses().length).toBe(1);
      await expect.poll(() => [...ids].filter((id) => sentById.has(id)).length).toBe(1);
      // The cookie went along and no Sec-Fetch-Site (plain http, not localhost): only the header
      // rule refuses it. Before the fix the page saw "LOADED 37x11".
      const [id] = [...ids].filter((x) => sentById.has(x));
      const headers = Object.fromEntries(Object.entries(sentById.get(id) ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      expect(headers.cookie).toContain('plinth_admin=');
      expect(headers['sec-fetch-site']).toBeUndefined();
      expect(statuses()).toEqual([403]);
      await expect.poll(() => other.title()).toBe('refused');
    } finally {
      await other.close();
    }
  });
});
