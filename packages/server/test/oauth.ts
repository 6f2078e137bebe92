import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { OAuth2Server } from 'oauth2-mock-server';
import type { TestServer } from './harness.js';
import { startLocalServer } from './local-server.js';

/**
 * A local OpenID Connect provider (oauth2-mock-server): discovery, JWKS, authorize (which
 * approves at once), token (PKCE checked when a challenge was sent), userinfo. `claims` are
 * put into every token it signs; `seen` keeps each authorize query and token request body.
 * @example const idp = await startOidcProvider(); idp.claims = { sub: 'g-1', email: 'a@b.c', email_verified: true };
 */
export async function startOidcProvider() {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const idp = {
    url: (server.issuer.url ?? '').replace(/\/+$/, ''),
    claims: {} as Record<string, unknown>,
    userinfo: {} as Record<string, unknown>,
    authorizeQueries: [] as Array<Record<string, string>>,
    tokenBodies: [] as Array<Record<string, string>>,
    /** The next token request is answered with this error (status 400). */
    failToken: null as string | null,
    stop: () => server.stop(),
  };
  server.service.on('beforeAuthorizeRedirect', (_redirect: unknown, req: IncomingMessage & { query: Record<string, string> }) => {
    idp.authorizeQueries.push({ ...req.query });
  });
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    Object.assign(token.payload, idp.claims);
  });
  server.service.on('beforeResponse', (response: { body: unknown; statusCode: number }, req: { body: Record<string, string> }) => {
    idp.tokenBodies.push({ ...req.body });
    if (idp.failToken) {
      response.statusCode = 400;
      response.body = { error: idp.failToken, error_description: 'told to fail' };
      idp.failToken = null;
    }
  });
  server.service.on('beforeUserinfo', (response: { body: Record<string, unknown> }) => {
    Object.assign(response.body, idp.userinfo);
  });
  return idp;
}

export type OidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;

interface GitHubGrant {
  challenge: string | null;
  redirectUri: string;
}

/**
 * A local server speaking GitHub's OAuth and REST shape: `/login/oauth/authorize` (approves at
 * once), `/login/oauth/access_token` (form body; JSON only with Accept: application/json; a bad
 * code is status 200 with `error`, as GitHub does; S256 PKCE checked), `/user` and
 * `/user/emails` (Bearer token; 403 without a User-Agent, as GitHub's API does).
 */
export async function startGitHub(clientId: string, clientSecret: string) {
  const grants = new Map<string, GitHubGrant>();
  const tokens = new Set<string>();
  const gh = {
    url: '',
    user: { login: 'octo', id: 583231, name: 'The Octocat', email: null as string | null, avatar_url: 'https://avatars.example/u/583231' },
    emails: [{ email: 'octo@example.com', primary: true, verified: true, visibility: 'private' }] as Array<Record<string, unknown>>,
    tokenRequests: [] as Array<Record<string, string>>,
    stop: async (): Promise<void> => undefined,
  };
  const server = await startLocalServer((req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = Object.fromEntries(url.searchParams);
      if (q.client_id !== clientId || !q.redirect_uri) return json(404, { error: 'unknown client' });
      const code = randomUUID().replace(/-/g, '').slice(0, 20);
      grants.set(code, {
        challenge: q.code_challenge_method === 'S256' ? (q.code_challenge ?? null) : null,
        redirectUri: q.redirect_uri,
      });
      const back = new URL(q.redirect_uri);
      back.searchParams.set('code', code);
      if (q.state) back.searchParams.set('state', q.state);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const body = Object.fromEntries(new URLSearchParams(raw));
      gh.tokenRequests.push(body);
      if (!String(req.headers.accept).includes('application/json')) {
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' }).end('error=use_json');
        return;
      }
      const grant = grants.get(body.code ?? '');
      grants.delete(body.code ?? '');
      const bad = (error: string) =>
        json(200, { error, error_description: `${error} (fake GitHub)`, error_uri: 'https://docs.github.com' });
      if (body.client_id !== clientId || body.client_secret !== clientSecret) return bad('incorrect_client_credentials');
      if (!grant) return bad('bad_verification_code');
      if (body.redirect_uri && body.redirect_uri !== grant.redirectUri) return bad('redirect_uri_mismatch');
      if (grant.challenge) {
        const expected = createHash('sha256')
          .update(body.code_verifier ?? '')
          .digest('base64url');
        if (expected !== grant.challenge) return bad('bad_verification_code');
      }
      const token = `gho_${randomUUID().replace(/-/g, '')}`;
      tokens.add(token);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!req.headers['user-agent'])
        return json(403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      const auth = String(req.headers.authorization ?? '');
      if (!tokens.has(auth.replace(/^Bearer /, ''))) return json(401, { message: 'Bad credentials' });
      return json(200, url.pathname === '/user' ? gh.user : gh.emails);
    }
    json(404, { message: 'Not Found' });
  });
  gh.url = server.origin;
  gh.stop = server.close;
  return gh;
}

export type GitHubFake = Awaited<ReturnType<typeof startGitHub>>;

/**
 * A browser's whole social sign-in against a test server: start (with the binding cookie it
 * sets), the provider's consent (approves at once), our callback. Answers the final redirect
 * (the app page with the session, or the error, in its fragment).
 * @example const { fragment } = await socialSignIn(t, 'github', 'https://app.example.com/auth/cb');
 */
export async function socialSignIn(t: TestServer, provider: string, redirect: string) {
  const start = await t.app.inject({ url: `/v1/auth/oauth/${provider}?redirect_url=${encodeURIComponent(redirect)}` });
  if (start.statusCode !== 302) throw new Error(`start answered ${start.statusCode}: ${start.body}`);
  const cookie = /plinth_oauth=([A-Za-z0-9_-]{43})/.exec(String(start.headers['set-cookie']))?.[1] ?? '';
  const consent = await fetch(String(start.headers.location), { redirect: 'manual' });
  const back = new URL(String(consent.headers.get('location')));
  const res = await t.app.inject({
    url: `${back.pathname}${back.search}`,
    headers: { 'user-agent': 'vitest-browser', cookie: `plinth_oauth=${cookie}` },
  });
  if (res.statusCode !== 302) throw new Error(`callback answered ${res.statusCode}: ${res.body}`);
  const location = new URL(String(res.headers.location));
  return { fragment: new URLSearchParams(location.hash.slice(1)), location };
}
