import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// What fails before a route runs (bad HTTP, huge headers, a bad path, a client too slow) still
// answers in the one error shape, over a real socket.
let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await createTestServer({ REQUEST_TIMEOUT_MS: '1500' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(() => t?.stop());

/** Writes raw bytes (all at once, or in timed pieces), and reads the whole answer until the server closes. */
function raw(pieces: string[], gapMs = 0): Promise<{ status: number; headers: string; body: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 20 s; got ${JSON.stringify(data.slice(0, 200))}`));
    }, 20_000);
    socket.on('data', (d) => {
      data += d;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(deadline);
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: rest.join('\r\n\r\n'), closed: true });
    });
    let i = 0;
    const next = () => {
      if (i >= pieces.length || socket.destroyed) return;
      socket.write(pieces[i++]);
      if (gapMs) setTimeout(next, gapMs);
      else next();
    };
    next();
  });
}

describe('errors before a route', () => {
  it('headers over the limit: 431 in the error shape', async () => {
    const res = await raw([`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({ code: 'headers_too_large', message: expect.any(String) });
  });

  it('malformed HTTP: 400 invalid_request in the error shape', async () => {
    const res = await raw(['GET /health HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n']);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request' });
  });

  it.each(['/v1/auth/%E0%A4%A', '/api/v1/%zz', '/v1/auth/oauth/%C0'])(
    'a path that is not percent-encoding (%s): 400 invalid_request',
    async (url) => {
      const res = await t.app.inject({ url, headers: t.as.anon });
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json()).toMatchObject({ code: expect.stringMatching(/^(invalid_request|route_not_found)$/), message: expect.any(String) });
    },
  );

  it('a client trickling its body is cut off after REQUEST_TIMEOUT_MS with 408 request_timeout', async () => {
    const body = JSON.stringify({ email: 'slow@example.com', password: 'correct horse battery' });
    const head = `POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\napikey: ${t.keys.publicKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    // One byte every 200 ms would take ~10 s; the server answers and closes long before.
    const started = Date.now();
    const res = await raw([head, ...body.split('')], 200);
    expect(res.closed).toBe(true);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'request_timeout' });
    expect(Date.now() - started).toBeLessThan(body.length * 200);
  });
});
