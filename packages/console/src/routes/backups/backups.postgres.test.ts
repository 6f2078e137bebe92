import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, openPage, shot, signIn, startConsole } from '../../../test/browser.js';

// The Backups page on PostgreSQL (issue 26): the server makes no backups there
// (backups_unavailable), so the page gives the pg_dump commands of docs/operations.md.

let s: ConsoleServer;
beforeAll(async () => {
  s = await startConsole();
});
afterAll(async () => {
  await s?.stop();
});

describe('backups (PostgreSQL)', () => {
  it('shows how to back up with pg_dump, as the server refuses backups', async () => {
    const refused = await s.t.app.inject({ method: 'GET', url: '/api/v1/backups', headers: s.t.as.service });
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'backups_unavailable']);
    const w = await openPage(await s.browser.newContext());
    await signIn(w, s.url);
    await w.page.goto(`${s.url}/console/backups`);
    const commands = w.page.getByTestId('pg-dump');
    await commands.waitFor();
    expect(await commands.textContent()).toContain('pg_dump --format=custom --file=app.dump "$DATABASE_URL"');
    expect(await w.page.getByRole('button', { name: 'Make a backup now' }).count()).toBe(0);
    await shot(w.page, 'backups-postgres', { phone: true });
    w.expectClean();
  });
});
