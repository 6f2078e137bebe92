import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BLOG_SQL, BOB } from '../../test/blog.js';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Upserts (docs/api.md): POST with Prefer: resolution=merge-duplicates | ignore-duplicates, on
// the primary key or on_conflict. Row-level security applies to both paths: Alice can never
// change, or learn the content of, Bob's note.
let t: TestServer;
let alice: Record<string, string>;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`${BLOG_SQL}
    create table kv (k text, v text);
    create policy open_kv on kv for all using (true) with check (true);
    create unique index kv_k on kv (k);`);
  expect(res.statusCode, res.body).toBe(200);
  alice = t.as.user(await t.mintToken(ALICE));
});
afterAll(() => t?.stop());

function upsert(body: unknown, resolution: 'merge' | 'ignore', query = '', headers = alice) {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/db/notes${query ? `?${query}` : ''}`,
    headers: { ...headers, prefer: `resolution=${resolution}-duplicates` },
    payload: body as object,
  });
}
const note = async (id: number) => (await t.app.inject({ url: `/api/v1/db/notes/${id}`, headers: t.as.service })).json();

describe('upsert', () => {
  it("merge-duplicates updates the caller's own row and creates a new one", async () => {
    const own = await upsert({ id: 1, body: 'edited' }, 'merge');
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json()).toMatchObject({ id: 1, slug: 'alice-1', body: 'edited', owner: ALICE });
    const fresh = await upsert({ id: 10, body: 'new' }, 'merge');
    expect(fresh.json()).toMatchObject({ id: 10, body: 'new', owner: ALICE });
  });

  it("onto another user's row: 403 rls_violation, nothing changed, nothing revealed", async () => {
    const res = await upsert({ id: 2, body: 'hijacked' }, 'merge');
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('rls_violation');
    expect(res.body).not.toContain('bob note');
    expect(res.body).not.toContain(BOB);
    expect(await note(2)).toMatchObject({ body: 'bob note', owner: BOB });
    // Taking it over by also naming oneself as owner does not get through either.
    expect((await upsert({ id: 2, body: 'mine', owner: ALICE }, 'merge')).statusCode).toBe(403);
    expect(await note(2)).toMatchObject({ body: 'bob note', owner: BOB });
  });

  it('ignore-duplicates skips an existing row, whoever owns it: no body', async () => {
    const res = await upsert({ id: 2, body: 'ignored' }, 'ignore');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.body).toBe('');
    expect(await note(2)).toMatchObject({ body: 'bob note' });
    const made = await upsert({ id: 11, body: 'made' }, 'ignore');
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({ id: 11, body: 'made' });
  });

  it('on_conflict picks another unique key; several rows at once', async () => {
    const res = await upsert(
      [
        { id: 1, slug: 'alice-1', body: 'by slug' },
        { id: 12, slug: 'alice-12', body: 'twelve' },
      ],
      'merge',
      'on_conflict=slug&select=id,body',
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual([
      { id: 1, body: 'by slug' },
      { id: 12, body: 'twelve' },
    ]);
  });

  it('a table with a unique index and no primary key', async () => {
    const headers = { ...t.as.service, prefer: 'resolution=merge-duplicates' };
    const first = await t.app.inject({ method: 'POST', url: '/api/v1/db/kv?on_conflict=k', headers, payload: { k: 'a', v: '1' } });
    expect(first.statusCode, first.body).toBe(201);
    const second = await t.app.inject({ method: 'POST', url: '/api/v1/db/kv?on_conflict=k', headers, payload: { k: 'a', v: '2' } });
    expect(second.json()).toEqual({ k: 'a', v: '2' });
    const rows = await t.app.inject({ url: '/api/v1/db/kv', headers: t.as.service });
    expect(rows.json()).toEqual([{ k: 'a', v: '2' }]);
  });

  const refusals: Array<[string, () => ReturnType<typeof upsert>, number, string]> = [
    ['on_conflict on a column that is not a unique key', () => upsert({ id: 1 }, 'merge', 'on_conflict=body'), 400, 'invalid_parameter'],
    ['on_conflict on an unknown column', () => upsert({ id: 1 }, 'merge', 'on_conflict=nope'), 400, 'column_not_found'],
    [
      'on_conflict without Prefer: resolution',
      () => t.app.inject({ method: 'POST', url: '/api/v1/db/notes?on_conflict=slug', headers: alice, payload: { id: 1 } }),
      400,
      'invalid_parameter',
    ],
    ['on_conflict on a read', () => t.app.inject({ url: '/api/v1/db/notes?on_conflict=slug', headers: alice }), 400, 'invalid_parameter'],
    [
      'one key twice in one request',
      () =>
        upsert(
          [
            { id: 20, body: 'a' },
            { id: 20, body: 'b' },
          ],
          'merge',
        ),
      400,
      'invalid_request',
    ],
    [
      'no primary key and no on_conflict',
      () =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/db/kv',
          headers: { ...t.as.service, prefer: 'resolution=merge-duplicates' },
          payload: { k: 'x' },
        }),
      400,
      'invalid_parameter',
    ],
  ];
  for (const [what, call, status, code] of refusals) {
    it(`${what}: ${status} ${code}`, async () => {
      const res = await call();
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().code).toBe(code);
    });
  }
});
