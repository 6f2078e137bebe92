import { describe, expect, it } from 'vitest';
import { createAuthServer, email, signUp } from '../../test/auth.js';
import { parseTrustProxy } from '../config/index.js';

// The client IP feeds the per-IP limits and the session record: a client must not choose it.
async function sessionIpAfterSignIn(env: Record<string, string>, remoteAddress: string, forwardedFor: string) {
  const t = await createAuthServer(env);
  try {
    const addr = email('ip');
    await signUp(t, addr);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/signin',
      remoteAddress,
      headers: { ...t.as.anon, 'x-forwarded-for': forwardedFor },
      payload: { email: addr, password: 'correct horse battery' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await t.db.query<{ ip: string }>('select ip from auth.sessions where id = $1', [
      JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString()).session_id,
    ]);
    return rows[0].ip;
  } finally {
    await t.stop();
  }
}

describe('client IP', () => {
  it('by default X-Forwarded-For is ignored: the IP is the connection’s', async () => {
    expect(await sessionIpAfterSignIn({}, '198.51.100.7', '203.0.113.5')).toBe('198.51.100.7');
  });

  it('behind a trusted proxy the forwarded client address is used', async () => {
    expect(await sessionIpAfterSignIn({ TRUST_PROXY: '10.0.0.0/8' }, '10.1.2.3', '203.0.113.5')).toBe('203.0.113.5');
  });

  it('a proxy that is not in the list is not believed', async () => {
    expect(await sessionIpAfterSignIn({ TRUST_PROXY: '10.0.0.0/8' }, '198.51.100.7', '203.0.113.5')).toBe('198.51.100.7');
  });

  it.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['true', true],
    ['10.0.0.0/8, 127.0.0.1,::1', ['10.0.0.0/8', '127.0.0.1', '::1']],
  ])('TRUST_PROXY=%j → %j', (value, expected) => {
    expect(parseTrustProxy(value)).toEqual(expected);
  });

  it.each(['yes please', '1', '10.0.0.0/8;evil'])('refuses TRUST_PROXY=%j, naming the variable', (value) => {
    expect(() => parseTrustProxy(value)).toThrow(/TRUST_PROXY/);
  });
});
