import { MASK } from '@plinth/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { ConfigError, parseProjectFile } from '../config/index.js';
import { applyProjectSettings } from './project-apply.js';

// plinth.json's auth and storage.buckets applied to a server (as at start and on a dev save):
// the keys it names are managed (409 managed_by_config through the API), the others stay editable.
const FILE = '/app/plinth.json';
let t: TestServer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const PROJECT = {
  auth: {
    min_password_length: 12,
    allowed_redirect_urls: ['http://localhost:3000/reset'],
    password_reset_url: 'http://localhost:3000/reset',
    providers: { github: { enabled: true, client_id: 'Iv1.abc', client_secret: 'env(GITHUB_SECRET)' } },
  },
  storage: { buckets: { avatars: { public: true, file_size_limit: 1048576, allowed_mime_types: ['image/*'] } } },
};

async function serverWith(project: unknown) {
  t = await createTestServer();
  const settings = parseProjectFile(JSON.stringify(project), FILE);
  await applyProjectSettings(t, settings, FILE, { GITHUB_SECRET: 'gh-secret' });
  return t;
}
const call = (s: TestServer, method: 'GET' | 'PATCH', url: string, payload?: unknown) =>
  s.app.inject({ method, url, headers: s.as.service, payload: payload as object });

describe('plinth.json auth and buckets on a server', () => {
  it('an empty database comes up with every setting and bucket of the file', async () => {
    const s = await serverWith(PROJECT);
    const auth = (await call(s, 'GET', '/api/v1/settings/auth')).json();
    expect(auth.min_password_length).toBe(12);
    expect(auth.password_reset_url).toBe('http://localhost:3000/reset');
    expect(auth.providers.github).toMatchObject({ enabled: true, client_id: 'Iv1.abc', client_secret: MASK });
    // The secret came from the environment, never from the file.
    expect(s.settings.auth().providers.github.client_secret).toBe('gh-secret');
    expect(auth.managed.sort()).toEqual(['allowed_redirect_urls', 'min_password_length', 'password_reset_url', 'providers.github']);
    expect(auth.managed_by).toBe(FILE);
    const bucket = (await call(s, 'GET', '/api/v1/storage/buckets/avatars')).json();
    expect(bucket).toMatchObject({ name: 'avatars', public: true, file_size_limit: 1048576, allowed_mime_types: ['image/*'] });
  });

  it('a PATCH of a managed key is 409 managed_by_config naming it; an unmanaged key is saved', async () => {
    const s = await serverWith(PROJECT);
    const managed = await call(s, 'PATCH', '/api/v1/settings/auth', { min_password_length: 10 });
    expect(managed.statusCode).toBe(409);
    expect(managed.json()).toMatchObject({
      code: 'managed_by_config',
      message: `The setting min_password_length is managed by ${FILE}; change it there.`,
    });
    const provider = await call(s, 'PATCH', '/api/v1/settings/auth', { providers: { github: { enabled: false } } });
    expect([provider.statusCode, provider.json().code]).toEqual([409, 'managed_by_config']);
    expect(provider.json().message).toMatch(/providers\.github/);
    expect(s.settings.auth().min_password_length).toBe(12);
    const free = await call(s, 'PATCH', '/api/v1/settings/auth', {
      session_duration_seconds: 7200,
      providers: { google: { enabled: false } },
    });
    expect(free.statusCode, free.body).toBe(200);
    expect(free.json().session_duration_seconds).toBe(7200);
  });

  it("a bucket's field the file names is refused through the API; one it leaves out is editable", async () => {
    const s = await serverWith({ storage: { buckets: { avatars: { public: true } } } });
    const refused = await call(s, 'PATCH', '/api/v1/storage/buckets/avatars', { public: false });
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'managed_by_config']);
    expect(refused.json().message).toBe(`The bucket avatars's public is managed by ${FILE}; change it there.`);
    const ok = await call(s, 'PATCH', '/api/v1/storage/buckets/avatars', { file_size_limit: 2048 });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ public: true, file_size_limit: 2048 });
  });

  it('applied again (plinth dev on save) it updates buckets, never deletes one, and frees keys it no longer names', async () => {
    const s = await serverWith(PROJECT);
    await applyProjectSettings(s, parseProjectFile(JSON.stringify({ auth: { min_password_length: 9 } }), FILE), FILE, {});
    expect(s.settings.auth().min_password_length).toBe(9);
    expect(s.settings.managed()?.keys).toEqual(['min_password_length']);
    expect((await call(s, 'GET', '/api/v1/storage/buckets/avatars')).statusCode).toBe(200);
    const nowFree = await call(s, 'PATCH', '/api/v1/storage/buckets/avatars', { public: false });
    expect(nowFree.statusCode).toBe(200);
    const provider = await call(s, 'PATCH', '/api/v1/settings/auth', { providers: { github: { enabled: false } } });
    expect(provider.statusCode).toBe(200);
  });

  it('realtime.tables switches capture on for each table; a table that does not exist is one config line naming it', async () => {
    t = await createTestServer();
    await t.sql('create table public.notes (id int primary key, body text); create table public.quiet (id int primary key)');
    await applyProjectSettings(t, parseProjectFile(JSON.stringify({ realtime: { tables: ['notes'] } }), FILE), FILE, {});
    const tables = (await call(t, 'GET', '/api/v1/realtime/tables')).json() as Array<{ table: string; enabled: boolean }>;
    expect(tables.filter((x) => x.enabled).map((x) => x.table)).toEqual(['notes']);
    // Applied again (every start), it is a no-op, not an error.
    await applyProjectSettings(t, parseProjectFile(JSON.stringify({ realtime: { tables: ['notes'] } }), FILE), FILE, {});
    expect(await t.realtime.tables.isEnabled('notes')).toBe(true);
    // Held: the API cannot switch it off; another table stays the API's.
    const off = await t.app.inject({ method: 'DELETE', url: '/api/v1/realtime/tables/notes', headers: t.as.service });
    expect([off.statusCode, off.json().code, off.json().message]).toEqual([
      409,
      'managed_by_config',
      `The realtime table notes is managed by ${FILE}; change it there.`,
    ]);
    expect((await t.app.inject({ method: 'PUT', url: '/api/v1/realtime/tables/quiet', headers: t.as.service })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/realtime/tables/quiet', headers: t.as.service })).statusCode).toBe(200);
    // A file that no longer names it frees it (and leaves it on).
    await applyProjectSettings(t, parseProjectFile('{}', FILE), FILE, {});
    expect(await t.realtime.tables.isEnabled('notes')).toBe(true);
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/realtime/tables/notes', headers: t.as.service })).statusCode).toBe(200);
    const missing = parseProjectFile(JSON.stringify({ realtime: { tables: ['nope'] } }), FILE);
    const err = await applyProjectSettings(t, missing, FILE, {}).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(new RegExp(`^config: ${FILE}: realtime\\.tables "nope": .+`));
  });

  it("a value the API's validator refuses is one config line naming the key", async () => {
    t = await createTestServer();
    const bad = parseProjectFile(JSON.stringify({ auth: { min_password_length: 4 } }), FILE);
    const err = await applyProjectSettings(t, bad, FILE, {}).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`config: ${FILE}: auth.min_password_length must be from 8 to 128`);
    const mime = parseProjectFile(JSON.stringify({ storage: { buckets: { a: { allowed_mime_types: ['nope'] } } } }), FILE);
    const err2 = await applyProjectSettings(t, mime, FILE, {}).catch((e) => e);
    expect(err2.message).toBe(
      `config: ${FILE}: storage.buckets.a.allowed_mime_types[0] must be a media type such as image/png, or image/*`,
    );
  });
});

describe('plinth.json webhooks on a server', () => {
  const HOOKS = {
    webhooks: {
      'paid orders': {
        table: 'orders',
        url: 'https://hooks.example.com/orders',
        events: ['insert', 'update'],
        filter: 'eq.status=paid',
        headers: { Authorization: 'env(HOOK_TOKEN)' },
      },
    },
  };
  const apply = (s: TestServer, project: unknown, env: Record<string, string> = { HOOK_TOKEN: 'Bearer t0ken' }) =>
    applyProjectSettings(s, parseProjectFile(JSON.stringify(project), FILE), FILE, env);

  it('creates the webhook once, updates it to the file at the next start, holds it against the API and frees it when dropped', async () => {
    t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const s = t;
    expect((await s.sql('create table orders (id serial primary key, status text)')).statusCode).toBe(200);
    expect((await apply(s, HOOKS)).webhooks).toEqual(['paid orders']);
    await apply(s, HOOKS); // a second start: still one
    const list = async () => (await call(s, 'GET', '/api/v1/webhooks')).json() as Array<Record<string, unknown>>;
    expect(await list()).toHaveLength(1);
    const [hook] = await list();
    expect(hook).toMatchObject({
      name: 'paid orders',
      table: 'orders',
      events: ['insert', 'update'],
      filter: 'eq.status=paid',
      headers: { Authorization: MASK },
    });
    // The header's value came from the environment (kept, answered masked).
    expect((await s.db.query<{ headers: Record<string, string> }>('select headers from plinth.webhooks')).rows[0].headers).toEqual({
      Authorization: 'Bearer t0ken',
    });

    const patch = await call(s, 'PATCH', `/api/v1/webhooks/${hook.id}`, { enabled: false });
    expect([patch.statusCode, patch.json().code]).toEqual([409, 'managed_by_config']);
    expect(patch.json().message).toBe(`The webhook paid orders is managed by ${FILE}; change it there.`);
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${hook.id}`, headers: s.as.service });
    expect(del.statusCode).toBe(409);

    // The file changes the events: the same webhook (same id, same secret) follows.
    await apply(s, { webhooks: { 'paid orders': { ...HOOKS.webhooks['paid orders'], events: ['insert'] } } });
    expect(await list()).toMatchObject([{ id: hook.id, events: ['insert'] }]);
    // Dropped from the file: kept, and editable again.
    await apply(s, {});
    const freed = await call(s, 'PATCH', `/api/v1/webhooks/${hook.id}`, { enabled: false });
    expect(freed.statusCode).toBe(200);
  });

  it('a value the API refuses, or a header variable that is not set, is one config: line naming the key', async () => {
    t = await createTestServer();
    const s = t;
    await expect(apply(s, { webhooks: { x: { table: 'nope', url: 'https://hooks.example.com/' } } })).rejects.toThrow(
      `${FILE}: webhooks.x.table `,
    );
    await expect(apply(s, HOOKS, {})).rejects.toThrow(
      `${FILE}: webhooks.paid orders.headers.Authorization reads the variable HOOK_TOKEN, which is not set`,
    );
  });
});
