import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from './harness.js';
import { routesOf, runScenario, type Scenario, type ScenarioRunner, urlOf } from './scenarios.js';

// Who may call what, for every route the server has (issue 32's scenario tables): each route is
// put in an access class by the rules below, area by area, and asked by four callers: no
// credential, the publishable key, a signed-in user's token, and (where it must not be refused)
// the secret key. A route no rule names fails the test, so a new route cannot go out without
// its access being decided here; a management route that forgets its guard fails it too.
// The routes' own behaviour is their area's tests' business: here only who is let in.

type Access =
  /** Management: the secret key or a console admin. No credential 401, the publishable key and a user 403. */
  | 'admin'
  /** A console session only (the console's own routes): 401 for every key and token. */
  | 'console'
  /** Any key: no credential 401; the publishable key and a user get past the guard. */
  | 'key'
  /** A signed-in user: no credential and the bare publishable key 401; the user gets past the guard. */
  | 'user'
  /** No credential needed (public reads, the console's sign-in, signed URLs carry their own token). */
  | 'public'
  /**
   * Before a session (sign-up, sign-in, links and codes): the project's key where the face asks
   * for one. An empty request without a credential never succeeds; the publishable key is let in.
   */
  | 'open'
  /** A method the route does not serve: 405 for everyone. */
  | 'method';

/** The classes, area by area; the first rule that matches `METHOD /pattern` decides. */
const RULES: Array<[RegExp, Access, string]> = [
  // The server's own pages.
  [/^GET \/(health|console|console\/\*|sdk\/plinth\.js)?$/, 'public', 'the console, the SDK, the health check'],
  [/^GET \/metrics$/, 'admin', 'Prometheus metrics: the secret key (docs/operations.md)'],
  // Console admins (admin/).
  [
    /^POST \/api\/v1\/admin\/(setup|setup\/check|login|invites\/accept)$/,
    'public',
    'the first admin, the sign-in and an invitation: before any session',
  ],
  [/^(POST \/api\/v1\/admin\/logout|GET \/api\/v1\/admin\/(me|keys))$/, 'console', "the console's own session"],
  [/^\w+ \/api\/v1\/(admin|admins|sql|settings|project|messages|dev|email|users|backups|webhooks)(\/|$)/, 'admin', 'management'],
  [/^\w+ \/api\/v1\/storage\/buckets/, 'admin', 'buckets are management'],
  [/^\w+ \/api\/v1\/realtime\/tables/, 'admin', 'which tables realtime publishes is management'],
  // The data API (rest/) and realtime: any key, then the database's policies decide.
  [/^GET \/api\/v1\/openapi\.json$/, 'key', 'the API description, as the caller sees it'],
  [/^(PUT \/api\/v1\/db|(PATCH|PUT|DELETE) \/api\/v1\/rpc)\/\*$/, 'method', 'not a verb of tables or functions'],
  [/^\w+ \/api\/v1\/(db|rpc)\/\*$/, 'key', 'rows and functions under RLS'],
  [/^(GET \/api\/v1\/realtime|POST \/api\/v1\/realtime\/broadcast)$/, 'key', 'subscriptions and broadcasts, under RLS'],
  // Storage: objects under RLS; public buckets and signed URLs without a key.
  [/^GET \/api\/v1\/storage\/(public|sign)\//, 'public', 'a public bucket; a signed URL carries its own token'],
  [/^\w+ \/api\/v1\/storage\/(object|sign|upload)\//, 'key', 'objects under RLS'],
  // Functions: each function decides (verify_jwt, docs/functions.md); an unknown one is 404 to all.
  [
    /^\w+ \/(api\/v1\/functions|functions\/v1)\/:name(\/\*)?$/,
    'public',
    "the function's own verify_jwt decides (functions/functions.test.ts)",
  ],
  // Plinth's auth (auth/): sign-in, sign-up and links need no session; what acts on a user needs theirs.
  [
    /^(POST \/v1\/auth\/(signout|reauthenticate|factors\/recovery-codes|factors\/:id\/challenge|passkeys\/register\/options)|(GET|PATCH) \/v1\/auth\/user|DELETE \/v1\/auth\/(identities\/:provider|factors\/:id|passkeys\/:id)|GET \/v1\/auth\/(factors|passkeys))$/,
    'user',
    "the signed-in user's own account",
  ],
  [/^GET \/v1\/auth\/(settings|\.well-known\/jwks\.json)$/, 'public', 'what a sign-in page reads'],
  [/^\w+ \/v1\/auth\//, 'open', 'sign-up, sign-in, links and codes: before any session'],
  // GoTrue's face (supabase/auth): the apikey on every call, as GoTrue's gateway asks.
  [
    /^(GET \/auth\/v1\/(health|settings|\.well-known\/jwks\.json|verify|authorize|callback)|POST \/auth\/v1\/callback)$/,
    'public',
    'redirects and discovery',
  ],
  [/^\w+ \/auth\/v1\/(admin\/|invite$)/, 'admin', "GoTrue's admin API: the service role"],
  [
    /^(\w+ \/auth\/v1\/(user|factors|passkeys\/(registration|:id))|POST \/auth\/v1\/logout|GET \/auth\/v1\/(reauthenticate|passkeys)$)/,
    'user',
    "the signed-in user's own account",
  ],
  [/^\w+ \/auth\/v1\//, 'open', 'sign-up, sign-in, links and codes: the apikey'],
  // PostgREST's face (supabase/rest), Realtime's and Storage's.
  [/^(PATCH|PUT|DELETE) \/rest\/v1\/rpc\/\*$/, 'method', 'PGRST101'],
  [/^PUT \/rest\/v1\/\*$/, 'key', "PUT is PostgREST's upsert of one row"],
  [/^\w+ \/rest\/v1\//, 'key', 'rows and functions under RLS'],
  [/^\w+ \/realtime\/v1\//, 'key', 'channels under RLS'],
  [/^\w+ \/storage\/v1\/bucket/, 'admin', 'buckets: the service role'],
  [
    /^(GET \/storage\/v1\/(object\/(public|info\/public|sign)|render\/image\/(public|sign))\/|PUT \/storage\/v1\/object\/upload\/sign\/)/,
    'public',
    'a public bucket; a signed URL carries its own token',
  ],
  [/^\w+ \/storage\/v1\//, 'key', 'objects under RLS'],
];

/** A body that gets past a route's validation to its guard, where an empty one would not. */
const BODIES: Record<string, unknown> = {
  'POST /api/v1/realtime/broadcast': { channel: 'room', event: 'e', payload: {} },
  'POST /realtime/v1/api/broadcast': { messages: [{ topic: 'room', event: 'e', payload: {} }] },
};

const classOf = (route: string) => RULES.find(([re]) => re.test(route));
/** The codes of a caller not signed in (ours, GoTrue's). */
const NOT_SIGNED_IN = ['unauthorized', 'invalid_token', 'forbidden', 'session_not_found', 'no_authorization', 'bad_jwt'];
/** The routes after which the walking user's session is over. */
const ENDS_SESSION = /^POST \/(v1\/auth\/signout|auth\/v1\/logout)$/;

describe('who may call each route', () => {
  let t: TestServer;
  let runner: ScenarioRunner;
  let routes: string[];
  let signIn: () => Promise<string>;

  beforeAll(async () => {
    t = await createTestServer();
    const email = `access-${process.pid}@example.com`;
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: t.as.service,
      payload: { email, password: 'correct horse battery', email_confirmed: true },
    });
    expect(made.statusCode, made.body).toBe(201);
    signIn = async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/signin',
        headers: t.as.anon,
        payload: { email, password: 'correct horse battery' },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().access_token as string;
    };
    runner = {
      inject: (o) => t.app.inject({ ...o, method: o.method as 'GET', payload: o.payload as string }),
      callers: { none: {}, anon: t.as.anon, user: t.as.user(await signIn()), service: t.as.service },
      // The faces' codes: PostgREST's and ours are `code`, GoTrue's `error_code`, Storage's `error`.
      codeOf: (res) => {
        if (!res.body) return undefined;
        const j = res.json() as Record<string, unknown>;
        return j.code ?? j.error_code ?? j.error;
      },
    };
    routes = routesOf(t.app);
  });
  afterAll(() => t?.stop());

  it('every route has an access class', () => {
    expect(routes.length).toBeGreaterThan(200);
    expect(routes.filter((r) => !classOf(r))).toEqual([]);
  });

  /** The scenarios of one route's class: who asks, and what the guard must answer. */
  function scenariosOf(route: string, access: Access): Scenario[] {
    const [method, pattern] = route.split(' ');
    const base = { method, url: urlOf(pattern), payload: BODIES[route] };
    const ours = !/^\/(auth|rest|storage|realtime)\/v1\//.test(pattern);
    const refused = { not: [200, 201, 202, 204, 500] };
    const admitted = { not: [401, 403] };
    switch (access) {
      case 'admin':
        return [
          { ...base, as: 'none', status: 401, ...(ours ? { code: 'unauthorized' } : {}) },
          { ...base, as: 'anon', status: 403, ...(ours ? { code: 'forbidden' } : {}) },
          { ...base, as: 'user', status: 403, ...(ours ? { code: 'forbidden' } : {}) },
          { ...base, as: 'service', status: admitted },
        ];
      case 'console':
        return ['none', 'anon', 'user', 'service'].map((as) => ({ ...base, as, status: 401, code: 'unauthorized' }));
      case 'key':
        return [
          { ...base, as: 'none', status: 401 },
          { ...base, as: 'anon', status: admitted },
          { ...base, as: 'user', status: admitted },
        ];
      case 'user':
        return [
          { ...base, as: 'none', status: 401 },
          { ...base, as: 'anon', status: 401 },
          // Past the guard: what a feature answers (a second factor asked for, passkeys off) is not a refusal of the caller.
          { ...base, as: 'user', status: { not: [401] }, notCodes: NOT_SIGNED_IN },
        ];
      case 'public':
        return [{ ...base, as: 'none', status: admitted }];
      case 'open':
        return [
          { ...base, as: 'none', status: refused },
          { ...base, as: 'anon', status: { not: [401, 500] } },
        ];
      case 'method':
        return ['none', 'anon', 'user'].map((as) => ({ ...base, as, status: 405 }));
    }
  }

  it('each route lets in exactly its class of caller', async () => {
    const checked: Record<Access, number> = { admin: 0, console: 0, key: 0, user: 0, public: 0, open: 0, method: 0 };
    const wrong: string[] = [];
    for (const route of routes) {
      const rule = classOf(route);
      if (!rule) continue; // named by the test above
      for (const s of scenariosOf(route, rule[1])) {
        await runScenario(runner, s).catch((err: Error) => wrong.push(`${rule[1]}: ${err.message.split('\n')[0]}`));
      }
      // A sign-out ends the user's sessions (those begun up to now: the test clock stands still
      // unless moved): the next routes get a new one, a second later.
      if (ENDS_SESSION.test(route)) {
        t.clock.advance(1000);
        runner.callers.user = t.as.user(await signIn());
      }
      checked[rule[1]]++;
    }
    expect(wrong).toEqual([]);
    // Each class holds routes (a rule that matches nothing would leave its class empty).
    for (const [access, n] of Object.entries(checked)) expect(n, access).toBeGreaterThan(0);
  });
});
