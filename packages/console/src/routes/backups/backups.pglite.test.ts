import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole, type Watched } from '../../../test/browser.js';

// Backups of the embedded project in Chromium (issue 26): made from the page, listed, and
// downloaded as the very file the server keeps (a .tar.gz whose manifest names it).

let s: ConsoleServer;
let w: Watched;
let page: Page;

beforeAll(async () => {
  s = await startConsole();
  expect((await s.t.sql('create table kept (id int primary key); insert into kept values (1)')).statusCode).toBe(200);
  w = await openPage(await s.browser.newContext({ acceptDownloads: true }));
  page = w.page;
  await signIn(w, s.url);
});
afterAll(async () => {
  await s?.stop();
});

describe('backups (embedded database)', () => {
  it('makes a backup, lists it and downloads the file the server keeps', async () => {
    await page.goto(`${s.url}/console/backups`);
    await page.getByText('No backup yet').waitFor();
    await shot(page, 'backups-empty');
    const made = answerOf(page, '/api/v1/backups', 'POST');
    await page.getByRole('button', { name: 'Make a backup now' }).click();
    const answer = await made;
    expect(answer.status()).toBe(201);
    const { name, size } = (await answer.json()) as { name: string; size: number };
    expect(name).toMatch(/^plinth-backup-\d{8}-\d{6}-\d{3}\.tar\.gz$/);
    await page
      .getByRole('status')
      .filter({ hasText: `Backup ${name} made` })
      .waitFor();
    const list = page.getByRole('list', { name: 'Backups' });
    await list.getByText(name).waitFor();
    await shot(page, 'backups', { phone: true });

    const download = page.waitForEvent('download');
    await list.getByRole('button', { name: `Download ${name}` }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(name);
    const bytes = readFileSync((await file.path()) ?? '');
    expect(bytes.length).toBe(size);
    // A gzip of a tar whose manifest says what it is.
    expect(gunzipSync(bytes).toString('latin1')).toContain('plinth-backup.json');
    w.expectClean();
  });
});
