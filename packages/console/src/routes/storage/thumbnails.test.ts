import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, shot, signIn, startConsole, type ConsoleServer, type Watched } from '../../../test/browser.js';

// The bucket browser's thumbnails in Chromium: an image's row shows a small picture made by the
// server's transforms (asked at 64 pixels, WebP), fetched once the row is near the screen; a
// text file's row shows none. Screenshots: .tmp/console/storage-thumbnails-{light,dark}.png.

let s: ConsoleServer;
let w: Watched;
let page: Page;

beforeAll(async () => {
  s = await startConsole();
  w = await openPage(await s.browser.newContext());
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

describe('Storage thumbnails', () => {
  it('shows a transformed thumbnail for each image, none for other files', async () => {
    const made = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: s.t.as.service,
      payload: { name: 'photos' },
    });
    expect(made.statusCode).toBe(201);
    const colours = [
      { name: 'red sunset.jpg', type: 'image/jpeg', rgb: { r: 220, g: 60, b: 40 } },
      { name: 'blue sea.png', type: 'image/png', rgb: { r: 30, g: 90, b: 200 } },
    ];
    for (const c of colours) {
      const img = sharp({ create: { width: 1200, height: 800, channels: 3, background: c.rgb } });
      const bytes = await (c.type === 'image/png' ? img.png() : img.jpeg()).toBuffer();
      const up = await s.t.app.inject({
        method: 'POST',
        url: `/api/v1/storage/object/photos/${encodeURIComponent(c.name)}`,
        headers: { ...s.t.as.service, 'content-type': c.type },
        payload: bytes,
      });
      expect(up.statusCode, up.body).toBe(201);
    }
    const text = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/photos/notes.txt',
      headers: { ...s.t.as.service, 'content-type': 'text/plain' },
      payload: 'not a picture',
    });
    expect(text.statusCode).toBe(201);

    const thumbs: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/v1/storage/object/photos/') && u.searchParams.has('width')) thumbs.push(u.search);
    });
    await page.goto(`${s.url}/console/storage/photos`);
    await page.getByRole('button', { name: 'notes.txt', exact: true }).waitFor();
    for (const c of colours) {
      const img = page.locator(`[data-thumbnail="${c.name}"] img`);
      await img.waitFor();
      // The picture shown is the server's 64-pixel square, not the 1200×800 original.
      await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && [el.naturalWidth, el.naturalHeight])).toEqual([64, 64]);
    }
    expect(await page.locator('[data-thumbnail="notes.txt"]').count()).toBe(0);
    expect(thumbs).toHaveLength(2);
    expect(thumbs.every((q) => q.includes('width=64') && q.includes('height=64'))).toBe(true);
    await shot(page, 'storage-thumbnails');
    w.expectClean();
  });
});
