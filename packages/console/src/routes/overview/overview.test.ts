import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleServer, openPage, shot, signIn, startConsole } from '../../../test/browser.js';

// The overview in Chromium: the counts (users, tables, storage, messages, requests) from their
// sources; the project URL and the public key it shows are what the SDK's createClient takes,
// and its "Connect your app" snippet, run as it is, reaches the project's tables.

let s: ConsoleServer;
beforeAll(async () => {
  s = await startConsole();
  const made = await s.t.sql(`create table notes (id int primary key, body text not null);
    alter table notes enable row level security;
    create policy notes_read on notes for select to anon using (true);
    insert into notes values (1, 'hello from the overview');`);
  expect(made.statusCode, made.body).toBe(200);
  const user = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: s.t.as.service,
    payload: { email: 'counted@example.com', password: 'a long user password' },
  });
  expect(user.statusCode, user.body).toBe(201);
  const bucket = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/buckets',
    headers: s.t.as.service,
    payload: { name: 'docs' },
  });
  expect(bucket.statusCode, bucket.body).toBe(201);
  const upload = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/object/docs/readme.txt',
    headers: { ...s.t.as.service, 'content-type': 'text/plain' },
    payload: 'x'.repeat(1536),
  });
  expect(upload.statusCode, upload.body).toBe(201);
  await s.t.db.query(
    `insert into plinth.outbox (channel, kind, recipient, payload, status) values ('email', 'test', 'gone@example.com', '{}', 'failed')`,
  );
});
afterAll(async () => {
  await s?.stop();
});

it('shows the project URL and public key that createClient takes, and they reach a table', async () => {
  const context = await s.browser.newContext();
  try {
    const w = await openPage(context);
    await signIn(w, s.url);
    const { page } = w;
    const projectUrl = (await page.getByTestId('project-url').textContent()) ?? '';
    const publicKey = (await page.getByTestId('public-key').textContent()) ?? '';
    expect(projectUrl).toBe(s.url);
    expect(publicKey).toMatch(/^pk_/);
    // The counts, each from its source.
    const count = (id: string) => page.getByTestId(`count-${id}`).textContent();
    await expect.poll(() => count('users')).toBe('1');
    expect(await count('tables')).toBe('1');
    expect(await count('storage')).toBe('1.5 KB · 1 file');
    expect(await count('queued')).toBe('0');
    expect(await count('failed')).toBe('1');
    expect(await count('requests')).toMatch(/^\d[\d,]*$/);
    await shot(page, 'overview');
    // The Pages card links every other page of the top bar.
    const nav = await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link').allTextContents();
    const listed = await page.getByRole('region', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(listed.sort()).toEqual(nav.filter((n) => n !== 'Overview').sort());

    // What an app would do with the two values: the SDK the server serves, in a browser page.
    // (A string, so that vitest does not rewrite the import() meant for the browser.)
    const rows = await page.evaluate(`(async () => {
      const { createClient } = await import(${JSON.stringify(`${projectUrl}/sdk/plinth.js`)});
      const { data, error } = await createClient(${JSON.stringify(projectUrl)}, ${JSON.stringify(publicKey)}).from('notes').select('id,body');
      return error ?? data;
    })()`);
    expect(rows).toEqual([{ id: 1, body: 'hello from the overview' }]);

    // The "Connect your app" snippet, run as it is (its import pointed at the server's copy of the SDK).
    const snippet = (await page.getByTestId('connect-snippet').textContent()) ?? '';
    expect(snippet).toContain(`createClient('${projectUrl}', '${publicKey}')`);
    const code = snippet
      .replace(
        "import { createClient } from '@plinth/sdk';",
        `const { createClient } = await import(${JSON.stringify(`${projectUrl}/sdk/plinth.js`)});`,
      )
      .concat('\nreturn error ?? data;');
    expect(await page.evaluate(`(async () => {\n${code}\n})()`)).toEqual([{ id: 1, body: 'hello from the overview' }]);
    w.expectClean();
  } finally {
    await context.close();
  }
});

it('tells a developer that the secret key is not theirs to see (issue 19: roles), and shows the public key', async () => {
  const developer = { email: 'dev@example.com', password: 'a long developer passphrase' };
  const invite = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/invites',
    headers: s.t.as.service,
    payload: { email: developer.email, role: 'developer' },
  });
  expect(invite.statusCode, invite.body).toBe(201);
  const token = new URL(invite.json().link).searchParams.get('token');
  const accepted = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/invites/accept',
    payload: { token, password: developer.password },
  });
  expect(accepted.statusCode, accepted.body).toBe(200);
  const context = await s.browser.newContext();
  try {
    const w = await openPage(context);
    await signIn(w, s.url, developer);
    const { page } = w;
    expect(await page.getByTestId('public-key').textContent()).toMatch(/^pk_/);
    expect(await page.getByTestId('secret-key-unavailable').textContent()).toBe('Not available for your role');
    expect(await page.getByRole('button', { name: 'Reveal' }).count()).toBe(0);
    expect(await page.getByText('null').count()).toBe(0);
    w.expectClean();
  } finally {
    await context.close();
  }
});
