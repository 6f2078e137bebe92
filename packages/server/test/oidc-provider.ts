/// <reference path="./oidc-provider-module.d.ts" />
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Provider in the test process: the npm package `oidc-provider` (a certified
 * implementation), with a sign-in page of our own (one field: the account; consent is given with
 * the sign-in) that a browser fills in or `signInAt` posts. What the tests steer:
 * - `accounts`: the users (account id → claims: email, email_verified, name…);
 * - `rotateKeys()`: a new signing key at the provider (the old one stays in its JWKS);
 * - `tamperNext(fn)`: the next token response's ID token goes through `fn` (forged in transit);
 * - `nonceNext`: the next authorization request's nonce is replaced (a token for another sign-in);
 * - `cacheControl`: the Cache-Control header of its discovery document and JWKS;
 * - `hits`: how often its discovery document and JWKS were fetched.
 * @example const idp = await startOidcIdp({ name: 'corp', redirectUris: ['http://localhost:8080/v1/auth/oauth/corp/callback'] });
 */
export interface IdpOptions {
  /** Tells this provider's cookies apart from another's on the same host (a browser sends both). */
  name: string;
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Pairwise subject identifiers (each client sees its own `sub` for an account). */
  pairwise?: boolean;
  /**
   * true: scope-requested claims (email, profile) go only to the userinfo endpoint, not into the
   * ID token (oidc-provider's `conformIdTokenClaims`); false: into the ID token too.
   */
  claimsOnlyAtUserinfo?: boolean;
  /** The signing algorithm of its keys: RS256 (default) or ES256. */
  alg?: 'RS256' | 'ES256';
  tokenAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /** What its discovery document announces for ID tokens (default oidc-provider's own list). */
  idTokenAlgs?: string[];
}

interface Key {
  jwk: JWK;
  privateKey: CryptoKey;
}

async function newKey(alg: 'RS256' | 'ES256'): Promise<Key> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg, use: 'sig' };
  return { jwk, privateKey };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startOidcIdp(o: IdpOptions) {
  const alg = o.alg ?? 'RS256';
  const keys: Key[] = [await newKey(alg)];
  const clientId = o.clientId ?? `${o.name}-client`;
  const clientSecret = o.clientSecret ?? `${o.name}-secret-${randomUUID()}`;
  const salt = randomUUID();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const idp = {
    issuer,
    clientId,
    clientSecret,
    accounts: new Map<string, Record<string, unknown>>(),
    hits: { discovery: 0, jwks: 0, token: 0, userinfo: 0 },
    cacheControl: null as string | null,
    nonceNext: null as string | null,
    tamper: null as ((idToken: string) => Promise<string> | string) | null,
    /** The next token response's ID token is replaced by what `fn` makes of it. */
    tamperNext(fn: (idToken: string) => Promise<string> | string) {
      idp.tamper = fn;
    },
    /** The `sub` a client of this provider sees for `account` (pairwise or not). */
    subjectOf(account: string): string {
      return o.pairwise ? pairwiseSub(account, new URL(o.redirectUris[0]).host) : account;
    },
    /** Signs `claims` with the provider's current key (an ID token it might have issued). */
    async sign(claims: JWTPayload, header: { alg?: string; kid?: string } = {}): Promise<string> {
      const key = keys[0];
      return new SignJWT(claims)
        .setProtectedHeader({ alg: header.alg ?? alg, kid: header.kid ?? key.jwk.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    /** The current signing key's public half. */
    publicJwk(): JWK {
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = keys[0].jwk;
      return pub;
    },
    /** A new signing key: ID tokens are signed with it from now on; the JWKS has both. */
    async rotateKeys(): Promise<void> {
      keys.unshift(await newKey(alg));
      provider = build();
    },
    /** The claims of the last ID token it issued. */
    lastIdToken: null as JWTPayload | null,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  function pairwiseSub(account: string, sector: string): string {
    return createHash('sha256').update(`${account}|${sector}|${salt}`).digest('hex');
  }

  function build() {
    const p = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: o.redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: o.tokenAuthMethod ?? 'client_secret_basic',
          id_token_signed_response_alg: alg,
          ...(o.pairwise ? { subject_type: 'pairwise' } : {}),
        },
      ],
      jwks: { keys: keys.map((k) => k.jwk) },
      async findAccount(_ctx: unknown, sub: string) {
        const claims = idp.accounts.get(sub);
        if (!claims) return undefined;
        return { accountId: sub, claims: async () => ({ ...claims, sub }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username', 'picture'] },
      conformIdTokenClaims: o.claimsOnlyAtUserinfo ?? false,
      subjectTypes: o.pairwise ? ['public', 'pairwise'] : ['public'],
      pairwiseIdentifier: async (_ctx: unknown, accountId: string, client: { sectorIdentifier: string }) =>
        pairwiseSub(accountId, client.sectorIdentifier),
      pkce: { required: () => true },
      ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 3600, Session: 3600 },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      cookies: {
        names: { session: `_${o.name}_session`, interaction: `_${o.name}_interaction`, resume: `_${o.name}_resume` },
        keys: [`cookie-key-${salt}`],
      },
      ...(o.idTokenAlgs ? { enabledJWA: { idTokenSigningAlgValues: o.idTokenAlgs } } : {}),
      renderError: async (ctx: { type: string; body: unknown }, out: unknown) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    });
    p.use(async (ctx, next) => {
      if (ctx.path === '/auth' && idp.nonceNext) {
        const q = new URLSearchParams(ctx.querystring);
        q.set('nonce', idp.nonceNext);
        idp.nonceNext = null;
        ctx.querystring = q.toString();
      }
      if (ctx.path === '/.well-known/openid-configuration') idp.hits.discovery++;
      if (ctx.path === '/jwks') idp.hits.jwks++;
      if (ctx.path === '/token') idp.hits.token++;
      if (ctx.path === '/me') idp.hits.userinfo++;
      await next();
      if (idp.cacheControl && (ctx.path === '/.well-known/openid-configuration' || ctx.path === '/jwks'))
        ctx.set('cache-control', idp.cacheControl);
      const body = ctx.body as { id_token?: string } | undefined;
      if (ctx.path === '/token' && ctx.status === 200 && body?.id_token) {
        idp.lastIdToken = decodeJwt(body.id_token);
        if (idp.tamper) {
          const fn = idp.tamper;
          idp.tamper = null;
          ctx.body = { ...body, id_token: await fn(body.id_token) };
        }
      }
    });
    return p;
  }
  let provider = build();

  /** Our sign-in page: who signs in (the consent comes with it). */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string) {
    const details = await provider.interactionDetails(req, res);
    const finish = async (accountId: string) => {
      const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
    };
    if (req.method === 'POST') {
      const login = new URLSearchParams(await readBody(req)).get('login') ?? '';
      if (!idp.accounts.has(login)) {
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(uid, `No account "${esc(login)}".`));
        return;
      }
      return finish(login);
    }
    // Signed in already, a new grant only: given at once.
    if (details.prompt.name === 'consent' && details.session?.accountId) return finish(details.session.accountId);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(uid, ''));
  }

  function page(uid: string, error: string) {
    return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(o.name)} sign-in</title></head><body>
<h1>Sign in to ${esc(o.name)}</h1><p id="error">${error}</p>
<form method="post" action="/interaction/${esc(uid)}"><label>Account <input name="login" id="login" autofocus></label>
<button type="submit" id="signin">Sign in</button></form></body></html>`;
  }

  server.on('request', (req, res) => {
    const m = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(req.url?.split('?')[0] ?? '');
    if (m) {
      interaction(req, res, m[1]).catch((err) => {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err.message));
      });
      return;
    }
    provider.callback()(req, res);
  });
  return idp;
}

export type OidcIdp = Awaited<ReturnType<typeof startOidcIdp>>;

/**
 * A browser at the provider, from Node: follows its redirects with its cookies, signs in as
 * `account` on its sign-in page, and answers the URL it finally sends the browser to (our
 * callback). Keep the `jar` to come back as the same browser (already signed in).
 * @example const callback = await signInAt(idp, new URL(start.headers.location), 'ada');
 */
export async function signInAt(idp: OidcIdp, authorizeUrl: URL, account: string, jar = new Map<string, string>()): Promise<URL> {
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
  };
  let url = authorizeUrl;
  for (let hop = 0; hop < 10; hop++) {
    if (url.origin !== idp.issuer) return url;
    let res = await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } });
    keep(res);
    if (res.status === 200 && url.pathname.startsWith('/interaction/')) {
      res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login: account }).toString(),
      });
      keep(res);
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${(await res.text()).slice(0, 300)}`);
    url = new URL(location, url);
  }
  throw new Error('too many redirects at the provider');
}
