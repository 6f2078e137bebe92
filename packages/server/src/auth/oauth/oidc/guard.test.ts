import { createServer, type Server } from 'node:net';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { code, createAuthServer } from '../../../../test/auth.js';
import type { TestServer } from '../../../../test/harness.js';
import { type LocalServer, startLocalServer } from '../../../../test/local-server.js';
import { type OidcIdp, startOidcIdp } from '../../../../test/oidc-provider.js';
import { createGuardedFetch } from '../../../lib/index.js';
import { oidcProvider } from '../providers/oidc.js';
import type { OidcDiscovery } from './discovery.js';

// Review round 3, R13: the requests the server makes to an OpenID Connect provider (discovery,
// JWKS, token, userinfo) go through the webhooks' address guard (lib/address.ts). While PUBLIC_URL
// is not loopback, a developer saving `oidc_providers` cannot make the server reach its own
// loopback services or the private network, and every refused address answers one message, so
// the settings check is no port scanner (before: "HTTP 404", "ECONNREFUSED", "UND_ERR_SOCKET",
// "ERR_SSL_WRONG_VERSION_NUMBER", or a provider on loopback simply saved).

let t: TestServer;
let idp: OidcIdp;
let raw: Server;
let rawPort = 0;
let closed = 0;
let heard: string[] = [];
let listener: LocalServer;

beforeAll(async () => {
  idp = await startOidcIdp({ name: 'local', redirectUris: ['https://api.example.com/v1/auth/oauth/corp/callback'] });
  // A service that speaks no HTTP (Redis, in the review).
  raw = createServer((s) => s.end('-ERR unknown command\r\n'));
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  rawPort = (raw.address() as { port: number }).port;
  const c = createServer();
  await new Promise<void>((r) => c.listen(0, '127.0.0.1', r));
  closed = (c.address() as { port: number }).port;
  await new Promise<void>((r) => c.close(() => r()));
  listener = await startLocalServer((req, res) => {
    heard.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  t = await createAuthServer({ PUBLIC_URL: 'https://api.example.com' });
});
afterAll(async () => {
  await t?.stop();
  await idp?.stop();
  await listener?.close();
  await new Promise((r) => raw?.close(r));
});

const save = (issuer: string) =>
  t.app.inject({
    method: 'PATCH',
    url: '/api/v1/settings/auth',
    headers: t.as.service,
    payload: { oidc_providers: [{ id: 'corp', name: 'Corp', issuer, client_id: 'c', client_secret: 's', enabled: true }] },
  });

describe('with a PUBLIC_URL that is not loopback', () => {
  it('the review’s four issuers (a live provider, a closed port, Redis, https to an http port) answer one generic failure', async () => {
    const issuers = [
      idp.issuer,
      `http://127.0.0.1:${closed}`,
      `http://localhost:${rawPort}`,
      `https://127.0.0.1:${new URL(idp.issuer).port}`,
    ];
    const messages: string[] = [];
    for (const issuer of issuers) {
      const res = await save(issuer);
      expect(code(res), issuer).toEqual([400, 'invalid_settings']);
      const [detail] = res.json().details;
      expect(detail).toMatchObject({ field: 'oidc_providers[0].issuer', code: 'oidc_unreachable' });
      messages.push(detail.message.replace(issuer, '<issuer>'));
    }
    expect(messages).toEqual(Array(4).fill('<issuer>/.well-known/openid-configuration could not be reached'));
    expect(t.settings.auth().oidc_providers).toEqual([]);
  });

  it('openid-client’s token and userinfo calls go through the guard too: nothing reaches a loopback endpoint', async () => {
    const issuer = listener.origin;
    const meta = { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, userinfo_endpoint: `${issuer}/me` };
    const discovery = { metadata: async () => meta, fetch: createGuardedFetch({ allowLoopback: false }) } as unknown as OidcDiscovery;
    const conf = { id: 'corp', name: 'Corp', issuer, client_id: 'c', client_secret: 's', enabled: true } as Parameters<
      typeof oidcProvider
    >[0];
    const config = await oidcProvider(
      { ...conf, token_endpoint_auth_method: 'client_secret_basic', scopes: ['openid'] },
      discovery,
    ).configure(
      { ...conf, token_endpoint_auth_method: 'client_secret_basic', scopes: ['openid'] },
      { baseUrl: null, apiUrl: null, now: Date.now },
    );
    heard = [];
    const grant = await oidc
      .authorizationCodeGrant(config, new URL('https://api.example.com/cb?code=abc&state=st'), { expectedState: 'st' })
      .catch((e: Error) => e);
    // openid-client wraps what its fetch threw ("something went wrong"); the cause is the guard's.
    const why = (e: unknown) => `${(e as Error).message}: ${((e as Error).cause as Error | undefined)?.message}`;
    expect(why(grant)).toBe(`something went wrong: ${issuer} could not be reached`);
    const info = await oidc.fetchUserInfo(config, 'token', oidc.skipSubjectCheck).catch((e: Error) => e);
    expect(why(info)).toBe(`something went wrong: ${issuer} could not be reached`);
    expect(heard).toEqual([]);
    // The same endpoints with loopback allowed (PUBLIC_URL on loopback): reached.
    const open = { metadata: async () => meta, fetch: createGuardedFetch({ allowLoopback: true }) } as unknown as OidcDiscovery;
    const reach = await oidcProvider({ ...conf, token_endpoint_auth_method: 'client_secret_basic', scopes: ['openid'] }, open).configure(
      { ...conf, token_endpoint_auth_method: 'client_secret_basic', scopes: ['openid'] },
      { baseUrl: null, apiUrl: null, now: Date.now },
    );
    await oidc.fetchUserInfo(reach, 'token', oidc.skipSubjectCheck).catch(() => null);
    expect(heard).toEqual(['GET /me']);
  });
});
