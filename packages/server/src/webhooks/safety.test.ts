import type { LookupAddress } from 'node:dns';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type Receiver, startReceiver } from '../../test/receiver.js';
import { checkHost, isBlockedAddress, type LookupFunction, RefusedAddressError } from './address.js';
import { createPoster } from './post.js';

// Without WEBHOOK_ALLOW_PRIVATE (the default), a webhook cannot reach loopback, private,
// link-local or metadata addresses: refused at save, and at every send on the address the socket
// connects to (so a name that resolves elsewhere later, DNS rebinding, is refused then).

let t: TestServer;
let r: Receiver;

beforeAll(async () => {
  t = await createTestServer();
  r = await startReceiver();
  await t.sql('create table things (id int primary key, name text)');
});

afterAll(async () => {
  await r?.close();
  await t?.stop();
});

const create = (url: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: t.as.service, payload: { name: 'probe', table: 'things', url } });

describe('at save', () => {
  it.each([
    'http://127.0.0.1:9/',
    'http://localhost:9/hook',
    'http://LOCALHOST:9/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://100.100.100.200/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://168.63.129.16/machine?comp=goalstate', // Azure's WireServer (review round 3, I9)
    'http://[::ffff:168.63.129.16]/',
  ])('%s is refused with webhook_url_refused', async (url) => {
    const res = await create(url);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'webhook_url_refused', details: { field: 'url' } });
    expect(res.json().message).toMatch(/WEBHOOK_ALLOW_PRIVATE=true/);
  });

  it('a name that does not resolve is refused with the reason', async () => {
    const res = await create('https://no-such-host.invalid/hook');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_webhook',
      details: [{ field: 'url', message: expect.stringMatching(/could not be resolved/) }],
    });
  });

  it('a PATCH to a private URL is refused and the stored one stays', async () => {
    // Made as the database would hold one saved while its name pointed elsewhere.
    const { rows } = await t.db.query<{ id: string }>(
      `insert into plinth.webhooks (name, table_name, events, url, secret) values ('p', 'things', '{insert}', 'https://example.com/', 'whsec_x') returning id::text as id`,
    );
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${rows[0].id}`,
      headers: t.as.service,
      payload: { url: 'http://127.0.0.1/' },
    });
    expect(res.json().code).toBe('webhook_url_refused');
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${rows[0].id}`, headers: t.as.service })).json().url).toBe(
      'https://example.com/',
    );
    await t.db.query('delete from plinth.webhooks where id = $1', [rows[0].id]);
  });
});

describe('at send', () => {
  it('a webhook whose URL reaches a private address now is refused at each attempt, and the endpoint hears nothing', async () => {
    // As if its name had resolved to a public address when saved: written straight to the table.
    const { rows } = await t.db.query<{ id: string }>(
      `insert into plinth.webhooks (name, table_name, events, url, secret, from_seq)
       values ('rebound', 'things', '{insert}', $1, 'whsec_test', (select last_seq from realtime.state)) returning id::text as id`,
      [`http://localhost:${r.port}/hook`],
    );
    await t.db.query(`select realtime.capture_for('things', 'webhooks')`);
    await t.app.inject({ method: 'POST', url: '/api/v1/db/things', headers: t.as.service, payload: { id: 1, name: 'x' } });
    await expect
      .poll(async () => {
        t.webhooks.kick();
        const log = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${rows[0].id}/deliveries`, headers: t.as.service });
        return log.json()[0]?.attempts ?? 0;
      })
      .toBeGreaterThanOrEqual(1);
    const [d] = (await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${rows[0].id}/deliveries`, headers: t.as.service })).json();
    expect(d).toMatchObject({ status: 'queued', response_status: null });
    expect(d.response).toMatch(/localhost resolves to (127\.0\.0\.1|::1).*refused/);
    expect(r.received).toEqual([]);
  });

  it('the socket connects only to what the guarded lookup checked (DNS rebinding: public at save, private at send)', async () => {
    // A resolver that answers a public address first (the save's check) and the receiver's
    // loopback address after (the send): the second answer is refused before any byte is sent.
    let calls = 0;
    const rebinding: LookupFunction = (_host, options, cb) => {
      calls++;
      const address = calls === 1 ? '93.184.216.34' : '127.0.0.1';
      if (options.all) cb(null, [{ address, family: 4 } as LookupAddress]);
      else cb(null, address, 4);
    };
    await checkHost('rebind.example', rebinding);
    const poster = createPoster({ allowPrivate: false, timeoutMs: 5000, lookup: rebinding });
    const attempt = await poster.post(`http://rebind.example:${r.port}/`, { 'content-type': 'application/json' }, '{}');
    poster.close();
    expect(attempt).toMatchObject({ ok: false, status: null });
    expect(attempt.response).toMatch(/rebind\.example resolves to 127\.0\.0\.1.*refused/);
    expect(r.received).toEqual([]);
    // With the flag, the same address is reached.
    const open = createPoster({ allowPrivate: true, timeoutMs: 5000 });
    expect((await open.post(`http://127.0.0.1:${r.port}/`, {}, '{}')).ok).toBe(true);
    open.close();
    r.received.length = 0;
  });

  it('an answer naming several addresses, one of them private, is refused', async () => {
    const mixed: LookupFunction = (_host, _options, cb) =>
      cb(null, [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ] as LookupAddress[]);
    await expect(checkHost('mixed.example', mixed)).rejects.toBeInstanceOf(RefusedAddressError);
  });
});

describe('which addresses are blocked', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.0.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.0.1', true],
    ['169.254.169.254', true],
    ['168.63.129.16', true],
    ['168.63.129.15', false],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::a9fe:a9fe', true],
    ['2002:7f00:1::1', true],
    ['2002:808:808::1', false],
    ['fd00:ec2::254', true],
    ['fe80::1%eth0', true],
    ['ff02::1', true],
    ['2606:4700:4700::1111', false],
    ['not an address', true],
  ])('%s → %s', (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked);
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(typeof isBlockedAddress(s)).toBe('boolean');
      }),
    );
  });
});

describe('hostile management bodies', () => {
  const field = fc.oneof(
    fc.anything(),
    fc.string(),
    fc.constantFrom(
      'things',
      'nope',
      'http://93.184.216.34/x',
      'https://no-such-host.invalid/',
      'http://127.0.0.1/',
      'javascript:alert(1)',
      '********',
    ),
    fc.array(fc.constantFrom('insert', 'update', 'delete', 'truncate', 1, null)),
    fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(fc.string(), fc.constant('********'), fc.integer())),
    fc.constantFrom('eq.id=1', 'gt.name=a', 'eq.id=abc', 'in.id=(1,2', 'is.id=maybe', 'select=id', 'eq.nope=1', '%zz', 'like.name=%'),
  );
  const body = fc.oneof(
    fc.anything(),
    fc.record(
      { name: field, table: field, events: field, url: field, filter: field, headers: field, enabled: field, extra: field },
      { requiredKeys: [] },
    ),
  );

  it('never answer 5xx: every refusal is the one error shape with a known code', async () => {
    const { ERROR_STATUS } = await import('@plinth/shared');
    const made = await t.db.query<{ id: string }>(
      `insert into plinth.webhooks (name, table_name, events, url, secret) values ('f', 'things', '{insert}', 'https://example.com/', 'whsec_x') returning id::text as id`,
    );
    const id = made.rows[0].id;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'POST /api/v1/webhooks',
          `PATCH /api/v1/webhooks/${id}`,
          `POST /api/v1/webhooks/${id}/secret/rotate`,
          'PATCH /api/v1/webhooks/x',
        ),
        body,
        async (route, payload) => {
          const [method, url] = route.split(' ') as ['POST' | 'PATCH', string];
          const res = await t.app.inject({
            method,
            url,
            headers: { ...t.as.service, 'content-type': 'application/json' },
            payload: JSON.stringify(payload) ?? 'null',
          });
          expect(res.statusCode, `${route} ${res.body}`).toBeLessThan(500);
          if (res.statusCode >= 400) {
            const b = res.json();
            expect(Object.keys(ERROR_STATUS)).toContain(b.code);
            expect(typeof b.message).toBe('string');
          }
        },
      ),
      { numRuns: 300, seed: 2024 },
    );
    // Whatever was accepted had a valid body: every stored webhook reads back.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: t.as.service });
    expect(list.statusCode).toBe(200);
  });

  it('the delivery log query never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('limit', 'offset', 'status', 'x'), fc.string()), async (q) => {
        const res = await t.app.inject({
          method: 'GET',
          url: `/api/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries?${new URLSearchParams(q)}`,
          headers: t.as.service,
        });
        expect(res.statusCode).toBeLessThan(500);
      }),
      { numRuns: 100, seed: 7 },
    );
  });
});
