import type { AdminRole } from '@plinth/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Issue 19, "admin roles": owner, admin, developer, viewer; invitations by one-time link; the
// team's list, role changes and removals (the last owner stays); every admin action in the
// audit log (docs/api.md §4.1).

const PASSWORD = 'a long admin passphrase';
const OWN = 'http://localhost:8080';
const CONSOLE = { 'x-plinth-admin': '1', origin: OWN, 'sec-fetch-site': 'same-origin' };
let t: TestServer;
let n = 0;

beforeAll(async () => {
  t = await createTestServer({ AUTH_RATE_SIGNIN_IP: '100000/900' });
  // A table whose realtime capture the roles switch.
  expect((await t.sql('create table public.team_feed (id int primary key)')).statusCode).toBe(200);
  // Rows no policy opens: only the secret key (or the console's cookie, which acts as it) sees them.
  expect(
    (await t.sql(`create table public.team_rows (id serial primary key, note text); insert into team_rows (note) values ('first')`))
      .statusCode,
  ).toBe(200);
});
afterAll(() => t?.stop());

const mail = (tag: string) => `${tag}-${++n}@example.com`;
const cookieOf = (setCookie: string | string[] | undefined) => `plinth_admin=${String(setCookie).match(/plinth_admin=([^;]*)/)?.[1]}`;

/** Headers of a console session of a new admin with `role` (invited by the secret key, accepted). */
async function as(role: AdminRole): Promise<{ headers: Record<string, string>; id: string; email: string }> {
  const email = mail(role);
  const invite = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers: t.as.service, payload: { email, role } });
  expect(invite.statusCode, invite.body).toBe(201);
  const token = new URL(invite.json().link).searchParams.get('token');
  const accepted = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites/accept', payload: { token, password: PASSWORD } });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { headers: { cookie: cookieOf(accepted.headers['set-cookie']), ...CONSOLE }, id: accepted.json().admin.id, email };
}

const req = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const status = async (p: ReturnType<typeof req>) => {
  const r = await p;
  return r.statusCode >= 400 ? `${r.statusCode} ${r.json().code}` : r.statusCode;
};

describe('invitations', () => {
  it('a one-time link makes an admin with the invited role, signed in; the link works once and not after 7 days', async () => {
    const invite = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites',
      headers: t.as.service,
      payload: { email: ' New@Example.com ', role: 'developer' },
    });
    expect(invite.statusCode, invite.body).toBe(201);
    const body = invite.json();
    expect(body).toMatchObject({ id: expect.any(String), email: 'new@example.com', role: 'developer', expires_at: expect.any(String) });
    expect(body.link).toMatch(/^http:\/\/localhost:8080\/console\/invite\?token=[\w-]{43}$/);
    expect(Date.parse(body.expires_at) - t.clock.now()).toBe(7 * 24 * 3600_000);
    // Only the SHA-256 of the token is stored.
    const token = new URL(body.link).searchParams.get('token') ?? '';
    const stored = await t.db.query<{ hash: string }>('select hash from plinth.admin_invites where id = $1', [body.id]);
    expect(stored.rows[0].hash).not.toContain(token);
    expect((await req('GET', '/api/v1/admin/invites', t.as.service)).json().map((i: { email: string }) => i.email)).toContain(
      'new@example.com',
    );

    const accept = (password = PASSWORD) =>
      t.app.inject({ method: 'POST', url: '/api/v1/admin/invites/accept', payload: { token, password } });
    expect((await accept('too short')).json().code).toBe('weak_password');
    const ok = await accept();
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().admin).toMatchObject({ email: 'new@example.com', role: 'developer' });
    const me = await req('GET', '/api/v1/admin/me', { cookie: cookieOf(ok.headers['set-cookie']), 'x-plinth-admin': '1' });
    expect(me.json().admin).toMatchObject({
      email: 'new@example.com',
      role: 'developer',
      id: expect.any(String),
      created_at: expect.any(String),
    });
    expect(await status(accept())).toBe('400 invite_invalid');

    const late = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites',
      headers: t.as.service,
      payload: { email: mail('late'), role: 'viewer' },
    });
    t.clock.advance(7 * 24 * 3600_000 + 1000);
    const lateToken = new URL(late.json().link).searchParams.get('token');
    expect(
      await status(
        t.app.inject({ method: 'POST', url: '/api/v1/admin/invites/accept', payload: { token: lateToken, password: PASSWORD } }),
      ),
    ).toBe('400 invite_invalid');
  });

  it('refuses an email that is an admin already, an unknown role, and a withdrawn link', async () => {
    const dev = await as('developer');
    expect(await status(req('POST', '/api/v1/admin/invites', t.as.service, { email: dev.email, role: 'admin' }))).toBe('409 admin_exists');
    expect(await status(req('POST', '/api/v1/admin/invites', t.as.service, { email: mail('x'), role: 'root' }))).toBe('400 invalid_value');
    const invite = (await req('POST', '/api/v1/admin/invites', t.as.service, { email: mail('withdrawn'), role: 'viewer' })).json();
    expect((await req('DELETE', `/api/v1/admin/invites/${invite.id}`, t.as.service)).statusCode).toBe(200);
    const token = new URL(invite.link).searchParams.get('token');
    expect(
      await status(t.app.inject({ method: 'POST', url: '/api/v1/admin/invites/accept', payload: { token, password: PASSWORD } })),
    ).toBe('400 invite_invalid');
  });

  // Review round 3, R11: a removed or demoted admin's spare links must die with its rights.
  const accept = (link: string) =>
    status(
      t.app.inject({
        method: 'POST',
        url: '/api/v1/admin/invites/accept',
        payload: { token: new URL(link).searchParams.get('token'), password: PASSWORD },
      }),
    );
  const pending = async () => (await req('GET', '/api/v1/admin/invites', t.as.service)).json().map((i: { email: string }) => i.email);

  it("removing an admin withdraws its pending invitations: the spare link is refused, as an attacker's would be", async () => {
    const rogue = await as('admin');
    const spare = await req('POST', '/api/v1/admin/invites', rogue.headers, { email: mail('spare'), role: 'admin' });
    expect(spare.statusCode, spare.body).toBe(201);
    expect(await pending()).toContain(spare.json().email);
    expect((await req('DELETE', `/api/v1/admin/admins/${rogue.id}`, t.as.service)).statusCode).toBe(200);
    expect(await pending()).not.toContain(spare.json().email);
    expect(await accept(spare.json().link)).toBe('400 invite_invalid');
  });

  it('demoting an admin withdraws the invitations its new role may not send; an owner made admin keeps its admin invitations', async () => {
    const rogue = await as('admin');
    const spare = (await req('POST', '/api/v1/admin/invites', rogue.headers, { email: mail('spare-dev'), role: 'developer' })).json();
    expect((await req('PATCH', `/api/v1/admin/admins/${rogue.id}`, t.as.service, { role: 'developer' })).statusCode).toBe(200);
    expect(await pending()).not.toContain(spare.email);
    expect(await accept(spare.link)).toBe('400 invite_invalid');

    const owner = await as('owner');
    await as('owner'); // not the last owner
    const ownerInvite = (await req('POST', '/api/v1/admin/invites', owner.headers, { email: mail('spare-owner'), role: 'owner' })).json();
    const adminInvite = (await req('POST', '/api/v1/admin/invites', owner.headers, { email: mail('kept-admin'), role: 'admin' })).json();
    expect((await req('PATCH', `/api/v1/admin/admins/${owner.id}`, t.as.service, { role: 'admin' })).statusCode).toBe(200);
    expect(await accept(ownerInvite.link)).toBe('400 invite_invalid');
    expect(await accept(adminInvite.link)).toBe(200);
  });

  it("accepting checks the inviter's current role, even when its invitations were left behind", async () => {
    const inviter = await as('admin');
    const link = (await req('POST', '/api/v1/admin/invites', inviter.headers, { email: mail('left'), role: 'developer' })).json().link;
    // The role changed without the team service (the SQL runner's owner connection could): the
    // invitation is still pending, and accepting it must still be refused.
    await t.db.query(`update plinth.admins set role = 'viewer' where id = $1`, [inviter.id]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites/accept',
      payload: { token: new URL(link).searchParams.get('token'), password: PASSWORD },
    });
    expect([res.statusCode, res.json().code]).toEqual([400, 'invite_invalid']);
    expect(res.json().message).toMatch(/withdrawn/);
    // The secret key's invitations have no inviter and stay valid.
    const byKey = (await req('POST', '/api/v1/admin/invites', t.as.service, { email: mail('by-key'), role: 'admin' })).json();
    expect(await accept(byKey.link)).toBe(200);
  });

  it('accepting is refused from another origin, like sign-in', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites/accept',
      headers: { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' },
      payload: { token: 'x'.repeat(43), password: PASSWORD },
    });
    expect([res.statusCode, res.json().code]).toEqual([403, 'csrf_rejected']);
  });
});

describe('what each role may do', () => {
  it.each<[string, 'GET' | 'POST' | 'PATCH' | 'PUT', string, object | undefined, Record<AdminRole, number | string>]>([
    ['read settings', 'GET', '/api/v1/settings/auth', undefined, { owner: 200, admin: 200, developer: 200, viewer: 200 }],
    ['list users', 'GET', '/api/v1/users', undefined, { owner: 200, admin: 200, developer: 200, viewer: 200 }],
    [
      'change the project',
      'PATCH',
      '/api/v1/project',
      { name: 'Renamed' },
      { owner: 200, admin: 200, developer: 200, viewer: '403 forbidden' },
    ],
    [
      'run SQL (even a select)',
      'POST',
      '/api/v1/sql',
      { query: 'select 1' },
      { owner: 200, admin: 200, developer: 200, viewer: '403 forbidden' },
    ],
    [
      'list saved queries (the SQL runner)',
      'GET',
      '/api/v1/sql/saved',
      undefined,
      { owner: 200, admin: 200, developer: 200, viewer: '403 forbidden' },
    ],
    [
      'save a query',
      'POST',
      '/api/v1/sql/saved',
      { name: 'x', query: 'select 1' },
      { owner: 201, admin: 201, developer: 201, viewer: '403 forbidden' },
    ],
    [
      // Review round 3, R10: the dev inbox holds reset and sign-in links, so a viewer (reads only)
      // would take over end-users through it.
      'read the dev inbox (it holds sign-in links)',
      'GET',
      '/api/v1/dev/inbox',
      undefined,
      { owner: 200, admin: 200, developer: 200, viewer: '403 forbidden' },
    ],
    ['list the realtime tables', 'GET', '/api/v1/realtime/tables', undefined, { owner: 200, admin: 200, developer: 200, viewer: 200 }],
    [
      "switch a table's realtime capture on",
      'PUT',
      '/api/v1/realtime/tables/team_feed',
      undefined,
      { owner: 200, admin: 200, developer: 200, viewer: '403 forbidden' },
    ],
    [
      'create a user',
      'POST',
      '/api/v1/users',
      { email: 'made-by-role@example.com' },
      { owner: 201, admin: 201, developer: 201, viewer: '403 forbidden' },
    ],
    [
      'list admins',
      'GET',
      '/api/v1/admin/admins',
      undefined,
      { owner: 200, admin: 200, developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'read the audit log',
      'GET',
      '/api/v1/admin/audit',
      undefined,
      { owner: 200, admin: 200, developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'invite a viewer',
      'POST',
      '/api/v1/admin/invites',
      { email: 'x', role: 'viewer' },
      { owner: 201, admin: 201, developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'invite an owner',
      'POST',
      '/api/v1/admin/invites',
      { email: 'x', role: 'owner' },
      { owner: 201, admin: '403 forbidden', developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'rotate the signing key',
      'POST',
      '/api/v1/admin/signing-keys/rotate',
      {},
      { owner: 200, admin: 200, developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'read rows with the cookie (the table browser)',
      'GET',
      '/api/v1/db/team_rows',
      undefined,
      { owner: 200, admin: 200, developer: 200, viewer: 200 },
    ],
    [
      'write rows with the cookie',
      'POST',
      '/api/v1/db/team_rows',
      { note: 'by a role' },
      { owner: 201, admin: 201, developer: 201, viewer: '403 forbidden' },
    ],
    [
      'make an admin with a password (it is an owner)',
      'POST',
      '/api/v1/admins',
      { email: 'x', password: PASSWORD },
      { owner: 201, admin: '403 forbidden', developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      "set an admin's password",
      'POST',
      '/api/v1/admins/password',
      { email: 'nobody-yet@example.com', password: PASSWORD },
      { owner: '404 not_found', admin: '403 forbidden', developer: '403 forbidden', viewer: '403 forbidden' },
    ],
    [
      'list the backups (they hold the keys; on PostgreSQL pg_dump makes them)',
      'GET',
      '/api/v1/backups',
      undefined,
      process.env.PLINTH_TEST_DB === 'postgres'
        ? { owner: '409 backups_unavailable', admin: '409 backups_unavailable', developer: '403 forbidden', viewer: '403 forbidden' }
        : { owner: 200, admin: 200, developer: '403 forbidden', viewer: '403 forbidden' },
    ],
  ])('%s', async (_what, method, url, payload, expected) => {
    for (const role of ['owner', 'admin', 'developer', 'viewer'] as const) {
      const who = await as(role);
      // Names that must be new each time: an invitee's email, a saved query's name.
      const body =
        payload && 'email' in payload && payload.email === 'x'
          ? { ...payload, email: mail('invitee') }
          : payload && 'name' in payload && payload.name === 'x'
            ? { ...payload, name: mail('saved') }
            : payload;
      const got = await status(
        req(method, url, who.headers, method === 'POST' && url === '/api/v1/users' ? { email: mail('made') } : body),
      );
      expect(got, `${role}: ${method} ${url}`).toBe(expected[role]);
    }
  });

  it('a viewer refused the dev inbox is told why (its messages hold sign-in links)', async () => {
    const viewer = await as('viewer');
    const res = await req('GET', '/api/v1/dev/inbox', viewer.headers);
    expect([res.statusCode, res.json().code]).toEqual([403, 'forbidden']);
    expect(res.json().message).toBe('Your console role (viewer) may not read the dev inbox: its messages hold sign-in and reset links.');
  });

  it("the table browser's cookie reads rows as the secret key for every role (no policy opens them), never from another site", async () => {
    const viewer = await as('viewer');
    const rows = await req('GET', '/api/v1/db/team_rows?order=id', viewer.headers);
    expect(rows.json()[0]).toMatchObject({ id: 1, note: 'first' });
    // The same cookie sent by a page of another site: refused (the cookie's rule).
    const cross = await req('GET', '/api/v1/db/team_rows', { ...viewer.headers, 'sec-fetch-site': 'cross-site' });
    expect(cross.statusCode).toBe(403);
    // A key decides over the cookie: the public key alone sees no row.
    const anon = await req('GET', '/api/v1/db/team_rows', { ...viewer.headers, apikey: t.keys.publicKey });
    expect(anon.json()).toEqual([]);
  });

  it('the secret key is read by owners and admins only; the others get the public key alone', async () => {
    for (const [role, secret] of [
      ['owner', true],
      ['admin', true],
      ['developer', false],
      ['viewer', false],
    ] as const) {
      const who = await as(role);
      const keys = (await req('GET', '/api/v1/admin/keys', { cookie: who.headers.cookie, 'x-plinth-admin': '1' })).json();
      expect(keys.public_key).toBe(t.keys.publicKey);
      expect(keys.secret_key).toBe(secret ? t.keys.secretKey : null);
    }
  });

  it('a viewer reads objects with the cookie but changes none', async () => {
    const bucket = await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: t.as.service,
      payload: { name: 'team-files' },
    });
    expect(bucket.statusCode, bucket.body).toBe(201);
    const uploaded = await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/team-files/a.txt',
      headers: { ...t.as.service, 'content-type': 'text/plain' },
      payload: 'a',
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const viewer = await as('viewer');
    expect((await req('GET', '/api/v1/storage/object/team-files/a.txt', viewer.headers)).body).toBe('a');
    expect(await status(req('DELETE', '/api/v1/storage/object/team-files/a.txt', viewer.headers))).toBe('403 forbidden');
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/team-files/b.txt',
      headers: { ...viewer.headers, 'content-type': 'text/plain' },
      payload: 'b',
    });
    expect([up.statusCode, up.json().code]).toEqual([403, 'forbidden']);
    expect(await status(req('DELETE', '/api/v1/storage/buckets/team-files', viewer.headers))).toBe('403 forbidden');
  });
});

describe('the team', () => {
  it('lists admins with their roles; an admin changes and removes admins but not owners; removal ends their sessions', async () => {
    const admin = await as('admin');
    const owner = await as('owner');
    const dev = await as('developer');
    const list = (await req('GET', '/api/v1/admin/admins', admin.headers)).json() as Array<{ id: string; role: string; email: string }>;
    expect(list.find((a) => a.id === dev.id)).toMatchObject({ email: dev.email, role: 'developer', created_at: expect.any(String) });
    expect(JSON.stringify(list)).not.toMatch(/password|hash/);

    const promoted = await req('PATCH', `/api/v1/admin/admins/${dev.id}`, admin.headers, { role: 'viewer' });
    expect([promoted.statusCode, promoted.json().role]).toEqual([200, 'viewer']);
    // The role counts from the next request of that session.
    expect(await status(req('PATCH', '/api/v1/project', dev.headers, { name: 'x' }))).toBe('403 forbidden');
    expect(await status(req('PATCH', `/api/v1/admin/admins/${owner.id}`, admin.headers, { role: 'viewer' }))).toBe('403 forbidden');
    expect(await status(req('PATCH', `/api/v1/admin/admins/${dev.id}`, admin.headers, { role: 'owner' }))).toBe('403 forbidden');
    expect(await status(req('DELETE', `/api/v1/admin/admins/${owner.id}`, admin.headers))).toBe('403 forbidden');

    expect((await req('DELETE', `/api/v1/admin/admins/${dev.id}`, admin.headers)).statusCode).toBe(200);
    expect(await status(req('GET', '/api/v1/admin/me', { cookie: dev.headers.cookie }))).toBe('401 unauthorized');
    expect(await status(req('DELETE', `/api/v1/admin/admins/${dev.id}`, admin.headers))).toBe('404 admin_not_found');
    expect(await status(req('PATCH', '/api/v1/admin/admins/not-a-uuid', admin.headers, { role: 'viewer' }))).toBe('404 admin_not_found');
  });

  it('the last owner stays: not demoted, not removed, whoever asks; with a second owner either may go', async () => {
    const s = await createTestServer();
    try {
      const { admin: first } = await s.admin.admins.upsert('first@example.com', PASSWORD);
      expect(first.role).toBe('owner');
      const call = (method: 'PATCH' | 'DELETE', id: string, payload?: object) =>
        s.app.inject({ method, url: `/api/v1/admin/admins/${id}`, headers: s.as.service, ...(payload ? { payload } : {}) });
      const code = async (p: ReturnType<typeof call>) => (await p).json().code;
      expect(await code(call('PATCH', first.id, { role: 'admin' }))).toBe('last_owner');
      expect(await code(call('DELETE', first.id))).toBe('last_owner');
      const { admin: second } = await s.admin.admins.upsert('second@example.com', PASSWORD);
      // Two owners demoting each other at once: exactly one is demoted.
      const both = await Promise.all([call('PATCH', first.id, { role: 'admin' }), call('PATCH', second.id, { role: 'admin' })]);
      expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      const owners = (await s.app.inject({ url: '/api/v1/admin/admins', headers: s.as.service }))
        .json()
        .filter((a: { role: string }) => a.role === 'owner');
      expect(owners).toHaveLength(1);
      expect(await code(call('DELETE', owners[0].id))).toBe('last_owner');
    } finally {
      await s.stop();
    }
  });
});

describe('the audit log', () => {
  it('records every admin action, newest first, with who made it; the secret key is null; secrets are not kept', async () => {
    const admin = await as('admin');
    await req('PATCH', '/api/v1/settings/auth', admin.headers, { min_password_length: 10 });
    await req('POST', '/api/v1/sql', admin.headers, { query: 'select 42 as answer' });
    const user = (await req('POST', '/api/v1/users', t.as.service, { email: mail('audited'), password: 'a user password' })).json();
    await req('PATCH', `/api/v1/users/${user.id}`, admin.headers, { password: 'another user password' });
    const refused = await req('PATCH', '/api/v1/project', { cookie: admin.headers.cookie }, { name: 'no header' });
    expect(refused.statusCode).toBe(403);

    const log = await req('GET', '/api/v1/admin/audit?limit=5', admin.headers);
    expect(log.statusCode).toBe(200);
    expect(log.headers['content-range']).toMatch(/^0-4\/\d+$/);
    const entries = log.json() as Array<{
      id: string;
      at: string;
      admin_email: string | null;
      action: string;
      target: string | null;
      details: Record<string, unknown>;
    }>;
    expect(entries.map((e) => e.action)).toEqual(['user.update', 'user.create', 'sql.run', 'settings.auth.update', 'admin.invite.accept']);
    expect(entries[0]).toMatchObject({ admin_email: admin.email, target: user.id, details: { fields: ['password'] } });
    expect(entries[1]).toMatchObject({ admin_email: null, target: user.id, details: { via: 'secret_key' } });
    expect(entries[2]).toMatchObject({ admin_email: admin.email, details: { query: 'select 42 as answer' } });
    expect(entries[3]).toMatchObject({ admin_email: admin.email, target: null, details: { fields: ['min_password_length'] } });
    expect(entries[4]).toMatchObject({ admin_email: admin.email, target: admin.id });
    expect(entries[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(entries)).not.toContain('another user password');
    expect(JSON.stringify(entries)).not.toContain('a user password');
  });

  it("records the table browser's row changes (table and filter, never values); a key's writes are not recorded", async () => {
    // Review round 3, R14: the console's cookie writes /api/v1/db as the secret key.
    expect(
      (
        await t.sql(
          `create table public.audit_notes (id int primary key, workspace_id int, title text, body text);
           insert into audit_notes values (1, 1, 'row 1a', 'first'), (2, 1, 'row 1b', 'second'), (3, 2, 'row 2', 'third')`,
        )
      ).statusCode,
    ).toBe(200);
    const dev = await as('developer');
    const secret = 'edited through the table browser';
    const write = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) => {
      const res = await req(method, url, headers, payload);
      if (res.statusCode >= 400 && res.statusCode !== 403) throw new Error(`${method} ${url}: ${res.body}`);
      return res;
    };
    expect((await write('PATCH', '/api/v1/db/audit_notes?eq.workspace_id=1', dev.headers, { body: secret })).statusCode).toBe(200);
    expect((await write('POST', '/api/v1/db/audit_notes', dev.headers, { id: 4, title: 'inserted-value', body: secret })).statusCode).toBe(
      201,
    );
    const upsert = await t.app.inject({
      method: 'POST',
      url: '/api/v1/db/audit_notes?on_conflict=id',
      headers: { ...dev.headers, prefer: 'resolution=merge-duplicates' },
      payload: { id: 4, title: 'upserted-value' },
    });
    expect(upsert.statusCode, upsert.body).toBe(201);
    expect((await write('DELETE', '/api/v1/db/audit_notes?like.title=row%201*', dev.headers)).statusCode).toBe(200);
    // The secret key (an app's server) is not audited, as storage's object changes are not.
    expect((await write('PATCH', '/api/v1/db/audit_notes?eq.id=3', t.as.service, { body: 'by the key' })).statusCode).toBe(200);
    // Nor a refused change (a viewer reads only).
    const viewer = await as('viewer');
    expect(await status(write('DELETE', '/api/v1/db/audit_notes?eq.id=3', viewer.headers))).toBe('403 forbidden');

    const log = (await req('GET', '/api/v1/admin/audit?limit=10', t.as.service)).json() as Array<{
      admin_email: string | null;
      action: string;
      target: string | null;
      details: Record<string, unknown>;
    }>;
    // Newest first; the viewer's invitation came after the changes.
    const entries = log.slice(log.findIndex((e) => e.action.startsWith('db.')));
    expect(entries.slice(0, 5).map((e) => e.action)).toEqual(['db.delete', 'db.insert', 'db.insert', 'db.update', 'admin.invite.accept']);
    expect(entries[0]).toMatchObject({
      admin_email: dev.email,
      target: 'audit_notes',
      details: { table: 'audit_notes', filter: 'like.title=row 1*' },
    });
    expect(entries[1]).toMatchObject({
      admin_email: dev.email,
      target: 'audit_notes',
      details: { filter: 'on_conflict=id', upsert: true },
    });
    expect(entries[2]).toMatchObject({ admin_email: dev.email, target: 'audit_notes', details: { table: 'audit_notes', filter: '' } });
    expect(entries[3]).toMatchObject({ admin_email: dev.email, target: 'audit_notes', details: { filter: 'eq.workspace_id=1' } });
    const text = JSON.stringify(log);
    for (const value of [secret, 'inserted-value', 'upserted-value', 'by the key']) expect(text).not.toContain(value);
  });

  it('records saved queries and realtime switches with who made them (developer and up, as the SQL runner)', async () => {
    const dev = await as('developer');
    const saved = await req('POST', '/api/v1/sql/saved', dev.headers, { name: 'weekly signups', query: 'select count(*) from auth.users' });
    expect(saved.statusCode, saved.body).toBe(201);
    const id = saved.json().id;
    expect((await req('PATCH', `/api/v1/sql/saved/${id}`, dev.headers, { name: 'signups this week' })).statusCode).toBe(200);
    expect((await req('DELETE', `/api/v1/sql/saved/${id}`, dev.headers)).statusCode).toBeLessThan(300);
    expect((await req('PUT', '/api/v1/realtime/tables/team_feed', dev.headers)).statusCode).toBe(200);
    expect((await req('DELETE', '/api/v1/realtime/tables/team_feed', dev.headers)).statusCode).toBe(200);
    const entries = (await req('GET', '/api/v1/admin/audit?limit=5', t.as.service)).json() as Array<Record<string, unknown>>;
    expect(entries.map((e) => [e.action, e.admin_email, e.target])).toEqual([
      ['realtime.table.disable', dev.email, 'team_feed'],
      ['realtime.table.enable', dev.email, 'team_feed'],
      ['sql.saved.delete', dev.email, id],
      ['sql.saved.update', dev.email, id],
      ['sql.saved.create', dev.email, id],
    ]);
    expect(entries[3].details).toMatchObject({ fields: ['name'], name: 'signups this week' });
    expect(entries[4].details).toMatchObject({ name: 'weekly signups' });
    // The query text is the runner's business, not the log's (it may hold data).
    expect(JSON.stringify(entries)).not.toContain('auth.users');
  });

  it("records webhooks' changes with who made them, and never their signing secret (a viewer may not change them)", async () => {
    const viewer = await as('viewer');
    const dev = await as('developer');
    // A public address literal: saving checks the address, and the sandbox resolves no names.
    const made = await req('POST', '/api/v1/webhooks', dev.headers, {
      name: 'audited',
      table: 'team_feed',
      url: 'https://93.184.216.34/in',
    });
    expect(made.statusCode, made.body).toBe(201);
    const { id, secret } = made.json();
    expect((await req('PATCH', `/api/v1/webhooks/${id}`, dev.headers, { enabled: false })).statusCode).toBe(200);
    expect((await req('POST', `/api/v1/webhooks/${id}/secret/rotate`, dev.headers, {})).statusCode).toBe(200);
    expect((await req('DELETE', `/api/v1/webhooks/${id}`, dev.headers)).statusCode).toBeLessThan(300);
    expect(
      await status(req('POST', '/api/v1/webhooks', viewer.headers, { name: 'no', table: 'team_feed', url: 'https://93.184.216.34/in' })),
    ).toBe('403 forbidden');
    const entries = (await req('GET', '/api/v1/admin/audit?limit=4', t.as.service)).json() as Array<Record<string, unknown>>;
    expect(entries.map((e) => [e.action, e.admin_email, e.target])).toEqual([
      ['webhook.delete', dev.email, id],
      ['webhook.secret.rotate', dev.email, id],
      ['webhook.update', dev.email, id],
      ['webhook.create', dev.email, id],
    ]);
    expect(JSON.stringify(entries)).not.toContain(secret);
  });

  it('records the team’s changes, sign-ins and key rotations with what changed', async () => {
    const owner = await as('owner');
    const invite = (await req('POST', '/api/v1/admin/invites', owner.headers, { email: mail('audit-invite'), role: 'viewer' })).json();
    const viewer = await as('viewer');
    await req('PATCH', `/api/v1/admin/admins/${viewer.id}`, owner.headers, { role: 'developer' });
    await req('DELETE', `/api/v1/admin/admins/${viewer.id}`, owner.headers);
    const rotated = (await req('POST', '/api/v1/admin/signing-keys/rotate', owner.headers, {})).json();
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { email: owner.email, password: PASSWORD } });
    expect(login.statusCode).toBe(200);
    const entries = (await req('GET', '/api/v1/admin/audit?limit=7', owner.headers)).json() as Array<Record<string, unknown>>;
    expect(entries.map((e) => [e.action, e.admin_email, e.target])).toEqual([
      ['admin.login', owner.email, owner.id],
      ['signing_keys.rotate', owner.email, null],
      ['admin.remove', owner.email, viewer.id],
      ['admin.role', owner.email, viewer.id],
      ['admin.invite.accept', viewer.email, viewer.id],
      ['admin.invite', null, expect.any(String)],
      ['admin.invite', owner.email, invite.id],
    ]);
    expect(entries[1].details).toMatchObject({ kid: rotated.kid, revoke: false });
    expect(entries[3].details).toMatchObject({ role: 'developer' });
    expect(entries[6].details).toMatchObject({ email: invite.email, role: 'viewer' });
  });
});
