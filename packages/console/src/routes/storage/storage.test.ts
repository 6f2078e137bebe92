import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Response as PlaywrightResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// The Storage page in Chromium, with the admin cookie only: a bucket made from the page, files
// dropped (a real drop event carrying File objects) and picked into a folder, folders browsed,
// downloads byte for byte under their own names, a signed URL copied from the page that reads
// the bytes without any header, per-file refusals of a bucket with a size limit and allowed
// types (and an overwrite), deletes, names with unicode, `#`, `?` and `%`, a non-empty bucket
// refused with the server's message, and a page on another port refused.

let s: ConsoleServer;
let w: Watched;
let page: Page;

const BYTES = Array.from({ length: 256 }, (_, i) => i);
const UNICODE = 'résumé #1 100%.txt';
const PICKED = 'notes? & = ü.md';
const FOLDER = 'reports 2024';

beforeAll(async () => {
  s = await startConsole();
  const context = await s.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true });
  w = await openPage(context);
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

/** The bytes of an object, read with the secret key (what the server really stored). */
async function stored(bucket: string, name: string): Promise<{ status: number; bytes: Buffer; type?: string; etag?: string }> {
  const path = name.split('/').map(encodeURIComponent).join('/');
  const res = await s.t.app.inject({ url: `/api/v1/storage/object/${bucket}/${path}`, headers: s.t.as.service });
  return {
    status: res.statusCode,
    bytes: res.rawPayload,
    type: res.headers['content-type'] as string,
    etag: res.headers.etag as string,
  };
}

type DropFile = { name: string; type: string; text?: string; bytes?: number[]; size?: number };

/** Drags files over the drop zone and drops them: the events a browser sends, with File objects made in the page. */
async function drop(files: DropFile[], { checkOverlay = false } = {}) {
  const zone = page.getByTestId('drop-zone');
  const dt = await page.evaluateHandle((list: DropFile[]) => {
    const data = new DataTransfer();
    for (const f of list) {
      const body = f.text ?? (f.bytes ? new Uint8Array(f.bytes) : new Uint8Array(f.size ?? 0).fill(7));
      data.items.add(new File([body], f.name, { type: f.type }));
    }
    return data;
  }, files);
  await zone.dispatchEvent('dragenter', { dataTransfer: dt });
  await zone.dispatchEvent('dragover', { dataTransfer: dt });
  if (checkOverlay) {
    await page.getByText(/^Drop to upload into /).waitFor();
    await shot(page, 'storage-dragging');
  }
  await zone.dispatchEvent('drop', { dataTransfer: dt });
}

const uploadAnswer = (bucket: string) => answerOf(page, new RegExp(`^/api/v1/storage/object/${bucket}/`), 'POST');

/** The statuses of the next `n` uploads to `bucket`, whatever order they finish in. */
function uploadStatuses(bucket: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${statuses.length} of ${n} uploads answered`)), 20_000);
    const seen = (r: PlaywrightResponse) => {
      if (r.request().method() !== 'POST' || !new URL(r.url()).pathname.startsWith(`/api/v1/storage/object/${bucket}/`)) return;
      statuses.push(r.status());
      if (statuses.length === n) {
        clearTimeout(timer);
        page.off('response', seen);
        resolve(statuses.sort());
      }
    };
    page.on('response', seen);
  });
}
const uploadRow = (name: string) => page.getByRole('region', { name: 'Uploads' }).getByRole('listitem', { name, exact: true });
const fileTable = () => page.getByRole('table', { name: /^Files in / });

describe('Storage page', () => {
  it('starts with no bucket, makes one from the form, and shows it empty', async () => {
    await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Storage' }).click();
    await page.getByRole('heading', { name: 'Storage' }).waitFor();
    await page.getByText('No bucket yet').waitFor();
    await page.getByRole('button', { name: 'New bucket' }).click();
    await page.getByLabel('Bucket name').fill('Docs!');
    w.allow(400);
    const bad = answerOf(page, '/api/v1/storage/buckets', 'POST');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    expect((await bad).status()).toBe(400);
    // The server's words, at the name field; nothing made.
    await expect.poll(() => page.getByRole('dialog').getByRole('alert').textContent()).toMatch(/a-z/);
    await page.getByLabel('Bucket name').fill('docs');
    const made = answerOf(page, '/api/v1/storage/buckets', 'POST');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    expect((await made).status()).toBe(201);
    await page.getByRole('heading', { name: 'docs' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/storage/docs');
    await page.getByText('This bucket is empty.').waitFor();
    await page.getByText('Private').waitFor();
    await shot(page, 'storage-empty-bucket');
    w.expectClean();
  });

  it('uploads two files by drag and drop and one by the file picker into a new folder', async () => {
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.getByLabel('Folder name').fill(FOLDER);
    await page.getByRole('button', { name: 'Open new folder' }).click();
    await page.getByText('This folder is empty.').waitFor();
    expect(await page.getByRole('navigation', { name: 'Breadcrumbs' }).innerText()).toMatch(/Storage\s*\/\s*docs\s*\/\s*reports 2024/);

    const answers = uploadStatuses('docs', 2);
    await drop(
      [
        { name: 'bytes.bin', type: 'application/octet-stream', bytes: BYTES },
        { name: UNICODE, type: 'text/plain', text: 'unicode, hash and percent' },
      ],
      { checkOverlay: true },
    );
    expect(await answers).toEqual([201, 201]);
    await expect.poll(() => uploadRow(`${FOLDER}/bytes.bin`).getByTestId('upload-state').textContent()).toBe('Uploaded');
    await expect.poll(() => uploadRow(`${FOLDER}/${UNICODE}`).getByTestId('upload-state').textContent()).toBe('Uploaded');

    const picked = uploadAnswer('docs');
    await page
      .getByLabel('Choose files to upload')
      .setInputFiles({ name: PICKED, mimeType: 'text/markdown', buffer: Buffer.from('# picked\n') });
    expect((await picked).status()).toBe(201);
    await expect.poll(() => uploadRow(`${FOLDER}/${PICKED}`).getByTestId('upload-state').textContent()).toBe('Uploaded');
    await expect.poll(() => page.getByRole('region', { name: 'Uploads' }).getByRole('status').textContent()).toBe('3 of 3 uploaded');

    // Stored under the exact names, in the folder, with the bytes and types sent.
    expect(Buffer.compare((await stored('docs', `${FOLDER}/bytes.bin`)).bytes, Buffer.from(BYTES))).toBe(0);
    const uni = await stored('docs', `${FOLDER}/${UNICODE}`);
    expect([uni.bytes.toString(), uni.type]).toEqual(['unicode, hash and percent', 'text/plain']);
    expect((await stored('docs', `${FOLDER}/${PICKED}`)).type).toBe('text/markdown');
    // The listing follows: the three files, with their sizes.
    await expect.poll(async () => (await fileTable().locator('tbody tr').allInnerTexts()).length).toBe(3);
    const row = fileTable().getByRole('row', { name: /bytes\.bin/ });
    expect(await row.innerText()).toContain('256 bytes');
    w.expectClean();
  });

  it('browses folders with the breadcrumbs and the folder rows', async () => {
    await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'docs' }).click();
    await page.getByRole('button', { name: `${FOLDER}/` }).waitFor();
    // A top-level file next to the folder, from the secret key (the listing is the server's).
    const top = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/docs/readme.txt',
      headers: { ...s.t.as.service, 'content-type': 'text/plain' },
      payload: 'top',
    });
    expect(top.statusCode).toBe(201);
    await page.reload();
    await page.getByRole('button', { name: 'readme.txt', exact: true }).waitFor();
    await shot(page, 'storage-bucket-root');
    await page.getByRole('button', { name: `${FOLDER}/` }).click();
    await page.getByRole('button', { name: UNICODE, exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.get('prefix')).toBe(FOLDER);
    // Search within the folder.
    await page.getByLabel('Search this folder').fill('résumé');
    const searched = answerOf(page, '/api/v1/storage/object/docs');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    expect(new URL((await searched).url()).searchParams.get('search')).toBe('résumé');
    await expect.poll(() => fileTable().locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Search this folder').fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => fileTable().locator('tbody tr').count()).toBe(3);
    await shot(page, 'storage-folder');
    w.expectClean();
  });

  it('downloads the bytes uploaded, under their own names', async () => {
    for (const [name, bytes] of [
      ['bytes.bin', Buffer.from(BYTES)],
      [UNICODE, Buffer.from('unicode, hash and percent')],
    ] as const) {
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: `Download ${name}` }).click();
      const d = await download;
      expect(d.suggestedFilename()).toBe(name);
      expect(Buffer.compare(await readFile(await d.path()), bytes)).toBe(0);
    }
    w.expectClean();
  });

  it('shows the details and copies a signed URL that reads the file without any header', async () => {
    await page.getByRole('button', { name: UNICODE, exact: true }).click();
    const details = page.getByRole('region', { name: UNICODE });
    await details.getByRole('definition').first().waitFor();
    const text = await details.getByLabel('Object details').innerText();
    const server = await stored('docs', `${FOLDER}/${UNICODE}`);
    expect(text).toContain(`${FOLDER}/${UNICODE}`);
    expect(text).toContain('25 bytes');
    expect(text).toContain('text/plain');
    expect(text).toContain(String(server.etag));
    expect(new URL(page.url()).searchParams.get('object')).toBe(`${FOLDER}/${UNICODE}`);

    await details.getByLabel('Signed URL expiry').selectOption('86400');
    const signed = answerOf(page, /^\/api\/v1\/storage\/sign\/docs\//, 'POST');
    await details.getByRole('button', { name: 'Copy signed URL' }).click();
    const answer = await signed;
    expect(answer.status()).toBe(200);
    expect(answer.request().postDataJSON()).toEqual({ expires_in: 86400 });
    await details.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await details.getByLabel('Signed URL', { exact: true }).inputValue());
    expect(copied.startsWith(`${s.url}/api/v1/storage/sign/docs/`)).toBe(true);
    const res = await fetch(copied); // no header, no cookie
    expect([res.status, await res.text()]).toEqual([200, 'unicode, hash and percent']);
    await shot(page, 'storage-details');

    // The open object is part of the URL: a reload (or a bookmark) shows it again.
    await page.reload();
    await page.getByRole('region', { name: UNICODE }).getByLabel('Object details').waitFor();
    w.expectClean();
  });

  it('deletes one file from its details and several from the listing, each after a confirmation', async () => {
    const details = page.getByRole('region', { name: UNICODE });
    await details.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByText(`${FOLDER}/${UNICODE}`).waitFor();
    const one = answerOf(page, '/api/v1/storage/object/docs', 'DELETE');
    await page.getByRole('button', { name: 'Delete file' }).click();
    expect((await one).request().postDataJSON()).toEqual({ paths: [`${FOLDER}/${UNICODE}`] });
    await page.getByText('Deleted 1 file.').waitFor();
    expect((await stored('docs', `${FOLDER}/${UNICODE}`)).status).toBe(404);
    await expect.poll(() => fileTable().locator('tbody tr').count()).toBe(2);
    expect(new URL(page.url()).searchParams.get('object')).toBeNull();

    await page.getByLabel('Select bytes.bin').check();
    await page.getByLabel(`Select ${PICKED}`).check();
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    const many = answerOf(page, '/api/v1/storage/object/docs', 'DELETE');
    await page.getByRole('button', { name: 'Delete files' }).click();
    expect((await many).status()).toBe(200);
    await page.getByText('Deleted 2 files.').waitFor();
    await page.getByText('This folder is empty.').waitFor();
    expect((await stored('docs', `${FOLDER}/bytes.bin`)).status).toBe(404);
    expect((await stored('docs', `${FOLDER}/${PICKED}`)).status).toBe(404);
    w.expectClean();
  });

  it('shows each refusal of a limited bucket at its file, and overwrites on request', async () => {
    await page.getByRole('link', { name: 'Storage', exact: true }).first().click();
    await page.getByRole('button', { name: 'New bucket' }).click();
    await page.getByLabel('Bucket name').fill('images');
    await page.getByRole('switch', { name: 'Public bucket' }).click();
    await page.getByLabel('File size limit', { exact: true }).fill('1');
    await page.getByLabel('File size limit unit').selectOption({ label: 'KiB' });
    await page.getByLabel('Allowed MIME types').fill('image/*');
    const made = answerOf(page, '/api/v1/storage/buckets', 'POST');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    expect((await made).request().postDataJSON()).toEqual({
      name: 'images',
      public: true,
      file_size_limit: 1024,
      allowed_mime_types: ['image/*'],
    });
    await page.getByRole('heading', { name: 'images' }).waitFor();
    await page.getByText('Size limit: 1 KiB · Allowed types: image/*').waitFor();

    w.allow(409, 413, 415);
    const answers = uploadStatuses('images', 3);
    await drop([
      { name: 'big.png', type: 'image/png', size: 2048 },
      { name: 'doc.pdf', type: 'application/pdf', text: '%PDF-1.4' },
      { name: 'ok.png', type: 'image/png', bytes: [137, 80, 78, 71, 1] },
    ]);
    expect(await answers).toEqual([201, 413, 415]);
    const state = (name: string) => uploadRow(name).getByTestId('upload-state').textContent();
    await expect.poll(() => state('big.png')).toMatch(/^Refused: .+\(payload_too_large\)$/);
    await expect.poll(() => state('doc.pdf')).toMatch(/^Refused: .+\(invalid_mime_type\)$/);
    await expect.poll(() => state('ok.png')).toBe('Uploaded');
    await page.getByRole('button', { name: 'ok.png', exact: true }).waitFor();
    await shot(page, 'storage-uploads');
    expect((await stored('images', 'big.png')).status).toBe(404);
    expect((await stored('images', 'doc.pdf')).status).toBe(404);

    // The same name again: 409, and "Overwrite" sends it with x-upsert.
    await page.getByRole('button', { name: 'Clear finished' }).click();
    const again = uploadAnswer('images');
    await drop([{ name: 'ok.png', type: 'image/png', bytes: [137, 80, 78, 71, 2, 2] }]);
    expect((await again).status()).toBe(409);
    await expect.poll(() => state('ok.png')).toMatch(/\(object_exists\)$/);
    await shot(page, 'storage-upload-exists');
    const upsert = uploadAnswer('images');
    await page.getByRole('button', { name: 'Overwrite ok.png' }).click();
    const over = await upsert;
    expect([over.status(), over.request().headers()['x-upsert']]).toEqual([201, 'true']);
    await expect.poll(() => state('ok.png')).toBe('Uploaded');
    expect(Buffer.compare((await stored('images', 'ok.png')).bytes, Buffer.from([137, 80, 78, 71, 2, 2]))).toBe(0);

    // A public bucket's file has a public URL to copy, read without any key.
    await page.getByRole('button', { name: 'ok.png', exact: true }).click();
    const details = page.getByRole('region', { name: 'ok.png' });
    await details.getByRole('button', { name: 'Copy public URL' }).click();
    // The copy finishes after the click (the clipboard write is asynchronous).
    const publicUrl = `${s.url}/api/v1/storage/public/images/ok.png`;
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(publicUrl);
    const res = await fetch(publicUrl);
    expect([res.status, Buffer.from(await res.arrayBuffer()).length]).toEqual([200, 6]);
    w.expectClean();
  });

  it('lists the buckets, refuses to delete a non-empty one with the server’s message, deletes an empty one', async () => {
    const empty = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: s.t.as.service,
      payload: { name: 'scratch' },
    });
    expect(empty.statusCode).toBe(201);
    await page.getByRole('link', { name: 'Storage', exact: true }).first().click();
    const table = page.getByRole('table', { name: 'Buckets' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    expect(await table.getByRole('row', { name: /images/ }).innerText()).toMatch(/images\s+Public\s+1 KiB\s+image\/\*/);
    expect(await table.getByRole('row', { name: /docs/ }).innerText()).toMatch(/docs\s+Private\s+Server limit\s+Any type/);
    await shot(page, 'storage-buckets');

    w.allow(409);
    await page.getByRole('button', { name: 'Delete bucket images' }).click();
    const refused = answerOf(page, '/api/v1/storage/buckets/images', 'DELETE');
    await page.getByRole('button', { name: 'Delete bucket', exact: true }).click();
    const answer = await refused;
    const body = await answer.json();
    expect([answer.status(), body.code]).toEqual([409, 'bucket_not_empty']);
    await expect.poll(() => page.getByRole('alert').innerText()).toContain(body.message);
    expect(await page.getByRole('alert').innerText()).toContain('code: bucket_not_empty');

    await page.getByRole('button', { name: 'Delete bucket scratch' }).click();
    const gone = answerOf(page, '/api/v1/storage/buckets/scratch', 'DELETE');
    await page.getByRole('button', { name: 'Delete bucket', exact: true }).click();
    expect((await gone).status()).toBe(200);
    await page.getByText('Bucket “scratch” deleted.').waitFor();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    w.expectClean();
  });

  it('changes a bucket’s settings from its page, and puts them back', async () => {
    const bucketOf = async (name: string) =>
      JSON.parse((await s.t.app.inject({ url: `/api/v1/storage/buckets/${name}`, headers: s.t.as.service })).body);
    await page.goto(`${s.url}/console/storage/docs`);
    await page.getByRole('button', { name: 'Bucket settings' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Bucket name').isDisabled()).toBe(true);
    await dialog.getByRole('switch', { name: 'Public bucket' }).click();
    await dialog.getByLabel('File size limit', { exact: true }).fill('2');
    await dialog.getByLabel('File size limit unit').selectOption({ label: 'MiB' });
    await dialog.getByLabel('Allowed MIME types').fill('text/*, application/pdf');
    await shot(page, 'storage-bucket-settings');
    const saved = answerOf(page, '/api/v1/storage/buckets/docs', 'PATCH');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    expect((await saved).status()).toBe(200);
    await page.getByText('Size limit: 2 MiB · Allowed types: text/*, application/pdf').waitFor();
    await page.getByText('Bucket settings saved.').waitFor();
    expect(await bucketOf('docs')).toMatchObject({
      public: true,
      file_size_limit: 2 * 1024 ** 2,
      allowed_mime_types: ['text/*', 'application/pdf'],
    });

    // Opened again, the form shows what is stored; emptied, the bucket is back to the server's limit and any type.
    await page.getByRole('button', { name: 'Bucket settings' }).click();
    expect(await dialog.getByLabel('File size limit', { exact: true }).inputValue()).toBe('2');
    expect(await dialog.getByLabel('Allowed MIME types').inputValue()).toBe('text/*\napplication/pdf');
    await dialog.getByRole('switch', { name: 'Public bucket' }).click();
    await dialog.getByLabel('File size limit', { exact: true }).fill('');
    await dialog.getByLabel('Allowed MIME types').fill('');
    const back = answerOf(page, '/api/v1/storage/buckets/docs', 'PATCH');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    expect((await back).status()).toBe(200);
    await page.getByText('Size limit: Server limit · Allowed types: Any type').waitFor();
    expect(await bucketOf('docs')).toMatchObject({ public: false, file_size_limit: null, allowed_mime_types: null });

    // plinth.json manages the bucket's public flag (as a start with storage.buckets.docs.public does):
    // the other fields still save; a change of the managed one is refused with the server's words.
    s.t.storage.buckets.setManaged('/app/plinth.json', new Map([['docs', ['public']]]));
    await page.getByRole('button', { name: 'Bucket settings' }).click();
    await dialog.getByLabel('File size limit', { exact: true }).fill('3');
    const limited = answerOf(page, '/api/v1/storage/buckets/docs', 'PATCH');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    expect((await limited).status()).toBe(200);
    await page.getByText(/Size limit: 3 MiB/).waitFor();
    w.allow(409);
    await page.getByRole('button', { name: 'Bucket settings' }).click();
    await dialog.getByRole('switch', { name: 'Public bucket' }).click();
    const refused = answerOf(page, '/api/v1/storage/buckets/docs', 'PATCH');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    expect((await refused).status()).toBe(409);
    await dialog.getByText("The bucket docs's public is managed by /app/plinth.json; change it there.").waitFor();
    expect(await bucketOf('docs')).toMatchObject({ public: false, file_size_limit: 3 * 1024 ** 2 });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    s.t.storage.buckets.setManaged('/app/plinth.json', new Map());
    w.expectClean();
  });

  it('opens a bookmarked object and an unknown bucket with a clear message', async () => {
    await page.goto(`${s.url}/console/storage/images?object=ok.png`);
    await page.getByRole('region', { name: 'ok.png' }).getByLabel('Object details').waitFor();
    await page.goto(`${s.url}/console/storage/nope`);
    await page.getByText('There is no bucket “nope”.').waitFor();
    w.expectClean();
  });
});

describe('a page on another port of the same host', () => {
  let evil: Server;
  let evilUrl: string;
  beforeAll(async () => {
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" target="sink" action="${s.url}/api/v1/storage/object/images/form.png" enctype="text/plain"><input name="x" value="y"></form>
</body></html>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => evil?.close(r));
  });

  it('cannot upload or overwrite files with the admin cookie the browser sends along', async () => {
    const other = await page.context().newPage(); // the admin is signed in in this browser
    try {
      await other.goto(`${evilUrl}/`);
      const refused = answerOf(other, '/api/v1/storage/object/images/ok.png', 'POST');
      await other.evaluate(
        (u) =>
          fetch(`${u}/api/v1/storage/object/images/ok.png`, {
            method: 'POST',
            credentials: 'include',
            mode: 'no-cors',
            headers: { 'content-type': 'image/png' },
            body: 'pwned',
          }).catch(() => null),
        s.url,
      );
      // 403 (csrf_rejected: the cookie was sent and resolved, then the change refused); no cookie would be 401.
      expect((await refused).status()).toBe(403);
      const form = answerOf(other, '/api/v1/storage/object/images/form.png', 'POST');
      await other.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()); // into an iframe
      expect((await form).status()).toBe(403);
      expect(Buffer.compare((await stored('images', 'ok.png')).bytes, Buffer.from([137, 80, 78, 71, 2, 2]))).toBe(0);
      expect((await stored('images', 'form.png')).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});
