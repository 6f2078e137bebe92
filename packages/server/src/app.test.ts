import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, createTestServer } from '../test/harness.js';

describe('server basics', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer();
  });
  afterAll(() => t.stop());

  it('GET /health answers ok', async () => {
    const res = await t.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('keys are opaque pk_/sk_ strings of at least 32 random bytes', () => {
    expect(t.keys.publicKey).toMatch(/^pk_[A-Za-z0-9_-]{43,}$/);
    expect(t.keys.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
  });

  it.each([
    ['no key', {}, 401, 'unauthorized'],
    ['a wrong apikey', { apikey: 'pk_wrong' }, 401, 'unauthorized'],
    ['a wrong bearer', { authorization: 'Bearer sk_wrong' }, 401, 'unauthorized'],
    ['a malformed Authorization', { authorization: 'Basic abc' }, 401, 'unauthorized'],
    ['the public key', 'anon', 403, 'forbidden'],
  ])('the SQL runner refuses %s', async (_name, headers, status, code) => {
    const h = headers === 'anon' ? t.as.anon : (headers as Record<string, string>);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: h, payload: { query: 'select 1' } });
    expect(res.statusCode).toBe(status);
    expect(res.json().code).toBe(code);
  });

  it('the SQL runner returns one result per statement with typed columns', async () => {
    const res = await t.sql(
      "create table notes (id serial primary key, body text); insert into notes (body) values ('a'), ('b'); select id, body from notes order by id",
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toMatchObject({ command: 'CREATE TABLE', rows: [] });
    expect(body.results[1]).toMatchObject({ command: 'INSERT', rowCount: 2 });
    expect(body.results[2]).toMatchObject({
      command: 'SELECT',
      rowCount: 2,
      columns: [
        { name: 'id', type: 'int4' },
        { name: 'body', type: 'text' },
      ],
      rows: [
        { id: 1, body: 'a' },
        { id: 2, body: 'b' },
      ],
      truncated: false,
    });
    expect(typeof body.durationMs).toBe('number');
  });

  it('the SQL runner truncates results at 1000 rows', async () => {
    const res = await t.sql('select g from generate_series(1, 1500) g');
    const r = res.json().results[0];
    expect(r.rows).toHaveLength(1000);
    expect(r.truncated).toBe(true);
  });

  it('a SQL error is 400 sql_error with sqlstate and position', async () => {
    const res = await t.sql('select 1;\nselect nonexistent_column from notes');
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('sql_error');
    expect(body.details.sqlstate).toBe('42703');
    expect(body.details.position).toBeGreaterThan(10);
  });

  it('a failed script changes nothing (it is atomic)', async () => {
    await t.sql("insert into notes (body) values ('c'); select 1/0");
    const res = await t.sql("select count(*)::int as n from notes where body = 'c'");
    expect(res.json().results[0].rows[0].n).toBe(0);
  });

  it('bad JSON and unknown routes get the error shape', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { ...t.as.service, 'content-type': 'application/json' },
      payload: '{"query":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: t.as.service, payload: { nope: 1 } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('invalid_request');
    const none = await t.app.inject({ url: '/nowhere' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'route_not_found' });
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { ...t.as.service, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: `select '${'x'.repeat(1024 * 1024)}'` }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('user tokens: valid, expired, tampered and alg none', async () => {
    const sub = crypto.randomUUID();
    const token = await t.mintToken(sub);
    const ok = await t.app.inject({ url: '/api/v1/sql', method: 'POST', headers: t.as.user(token), payload: { query: 'select 1' } });
    expect(ok.statusCode).toBe(403); // a user is not the service role
    const [h, p] = token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: crypto.randomUUID() })).toString('base64url')}.${token.split('.')[2]}`;
    for (const bad of [none, tampered]) {
      const res = await t.app.inject({ url: '/api/v1/sql', method: 'POST', headers: t.as.user(bad), payload: { query: 'select 1' } });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('invalid_token');
    }
    const short = await t.mintToken(sub, {}, 60);
    t.clock.advance(61_000);
    const expired = await t.app.inject({ url: '/api/v1/sql', method: 'POST', headers: t.as.user(short), payload: { query: 'select 1' } });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().code).toBe('token_expired');
  });

  it('publishes the signing key as a JWKS', async () => {
    const res = await t.app.inject({ url: '/v1/auth/.well-known/jwks.json' });
    const jwks = res.json();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(jwks.keys[0].d).toBeUndefined();
  });
});
