/**
 * One table of requests and the answers the real server gives them, run against the real
 * server (e2e/fake-server.test.ts) and against the SDK's fake server (fake-server.ts), so the
 * fake the unit tests lean on cannot drift from the server: a change of status, code or
 * shape on either side fails that test. Only what the unit tests use is in the table.
 */

export interface Target {
  url: string;
  publicKey: string;
  /** An address no account has yet. */
  email: string;
}

interface Ctx {
  t: Target;
  first?: Session;
  session?: Session;
  rotated?: Session;
}

interface Session {
  access_token: string;
  refresh_token: string;
}

interface Step {
  name: string;
  method: string;
  path: string;
  body?: (c: Ctx) => unknown;
  /** The bearer token sent, if any. */
  bearer?: (c: Ctx) => string | undefined;
  apikey?: (c: Ctx) => string;
  /** Keeps what later steps need. */
  save?: (c: Ctx, body: Record<string, unknown>) => void;
  /** Something of the answer beyond its status, code and keys, as a short word. */
  note?: (c: Ctx, body: Record<string, unknown>) => string;
}

/** What a step observed: the status, the error code, and the sorted keys of the body (and of its `session` / `user`). */
export interface Observed {
  step: string;
  status: number;
  code?: string;
  keys: string[];
  note?: string;
}

const PASSWORD = 'correct horse battery';
const USER_KEYS = [
  'avatar',
  'created_at',
  'email',
  'email_confirmed_at',
  'id',
  'identities',
  'last_sign_in_at',
  'name',
  'phone',
  'phone_confirmed_at',
  'updated_at',
];
const SESSION_KEYS = ['access_token', 'expires_at', 'expires_in', 'next_aal', 'refresh_token', 'token_type', 'user'];

const STEPS: Step[] = [
  {
    name: 'sign-up',
    method: 'POST',
    path: '/v1/auth/signup',
    body: (c) => ({ email: c.t.email, password: PASSWORD }),
    save: (c, b) => {
      c.first = b.session as Session;
    },
  },
  { name: 'sign-up again', method: 'POST', path: '/v1/auth/signup', body: (c) => ({ email: c.t.email, password: PASSWORD }) },
  {
    name: 'sign-in, wrong password',
    method: 'POST',
    path: '/v1/auth/signin',
    body: (c) => ({ email: c.t.email, password: 'not it at all' }),
  },
  {
    name: 'sign-in',
    method: 'POST',
    path: '/v1/auth/signin',
    body: (c) => ({ email: c.t.email, password: PASSWORD }),
    save: (c, b) => {
      c.session = b as unknown as Session;
    },
  },
  { name: 'current user', method: 'GET', path: '/v1/auth/user', bearer: (c) => c.session?.access_token },
  { name: 'current user, no token', method: 'GET', path: '/v1/auth/user' },
  { name: 'current user, a bearer that is no token', method: 'GET', path: '/v1/auth/user', bearer: () => 'forged' },
  { name: 'current user, a token not of this project', method: 'GET', path: '/v1/auth/user', bearer: () => 'eyJhbGciOiJFUzI1NiJ9.e30.xx' },
  { name: 'current user, a wrong key', method: 'GET', path: '/v1/auth/user', apikey: () => 'pk_not_the_key' },
  {
    name: 'update the name',
    method: 'PATCH',
    path: '/v1/auth/user',
    bearer: (c) => c.session?.access_token,
    body: () => ({ name: 'Ada' }),
    note: (_c, b) => `name ${b.name}`,
  },
  {
    name: 'refresh',
    method: 'POST',
    path: '/v1/auth/refresh',
    body: (c) => ({ refresh_token: c.session?.refresh_token }),
    save: (c, b) => {
      c.rotated = b as unknown as Session;
    },
    note: (c, b) => (b.refresh_token === c.session?.refresh_token ? 'same refresh token' : 'new refresh token'),
  },
  {
    name: 'the same refresh token again, within the grace window',
    method: 'POST',
    path: '/v1/auth/refresh',
    body: (c) => ({ refresh_token: c.session?.refresh_token }),
    note: (c, b) => (b.refresh_token === c.rotated?.refresh_token ? 'the set the first refresh gave' : 'another set'),
  },
  { name: 'refresh, unknown token', method: 'POST', path: '/v1/auth/refresh', body: () => ({ refresh_token: 'no-such-token' }) },
  { name: 'forgot password', method: 'POST', path: '/v1/auth/forgot-password', body: (c) => ({ email: c.t.email }) },
  {
    name: 'magic link to a page not allowed',
    method: 'POST',
    path: '/v1/auth/request-magic-link',
    body: (c) => ({ email: c.t.email, emailRedirectTo: 'https://evil.example.net/' }),
  },
  { name: 'a table that does not exist', method: 'GET', path: '/api/v1/db/no_such_table', bearer: (c) => c.rotated?.access_token },
  { name: 'sign-out', method: 'POST', path: '/v1/auth/signout', bearer: (c) => c.rotated?.access_token },
  { name: 'current user after sign-out', method: 'GET', path: '/v1/auth/user', bearer: (c) => c.rotated?.access_token },
];

/** The answers the real server gives (checked by e2e/fake-server.test.ts); the fake must give the same. */
export const EXPECTED: Observed[] = [
  { step: 'sign-up', status: 200, keys: ['session', 'user', `session: ${SESSION_KEYS}`, `user: ${USER_KEYS}`] },
  { step: 'sign-up again', status: 409, code: 'email_exists', keys: ['code', 'message'] },
  { step: 'sign-in, wrong password', status: 400, code: 'invalid_credentials', keys: ['code', 'message'] },
  { step: 'sign-in', status: 200, keys: [...SESSION_KEYS, `user: ${USER_KEYS}`] },
  { step: 'current user', status: 200, keys: USER_KEYS },
  { step: 'current user, no token', status: 401, code: 'unauthorized', keys: ['code', 'message'] },
  { step: 'current user, a bearer that is no token', status: 401, code: 'unauthorized', keys: ['code', 'message'] },
  { step: 'current user, a token not of this project', status: 401, code: 'invalid_token', keys: ['code', 'message'] },
  { step: 'current user, a wrong key', status: 401, code: 'unauthorized', keys: ['code', 'message'] },
  { step: 'update the name', status: 200, keys: USER_KEYS, note: 'name Ada' },
  { step: 'refresh', status: 200, keys: [...SESSION_KEYS, `user: ${USER_KEYS}`], note: 'new refresh token' },
  {
    step: 'the same refresh token again, within the grace window',
    status: 200,
    keys: [...SESSION_KEYS, `user: ${USER_KEYS}`],
    note: 'the set the first refresh gave',
  },
  { step: 'refresh, unknown token', status: 401, code: 'invalid_refresh_token', keys: ['code', 'message'] },
  { step: 'forgot password', status: 200, keys: [] },
  { step: 'magic link to a page not allowed', status: 400, code: 'redirect_not_allowed', keys: ['code', 'message'] },
  { step: 'a table that does not exist', status: 404, code: 'table_not_found', keys: ['code', 'message'] },
  { step: 'sign-out', status: 204, keys: [] },
  { step: 'current user after sign-out', status: 401, code: 'invalid_token', keys: ['code', 'message'] },
];

const keysOf = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).sort() : []);

/** Runs the table against `t`, in order, and says what each step got. */
export async function runScenarios(t: Target): Promise<Observed[]> {
  const c: Ctx = { t };
  const out: Observed[] = [];
  for (const step of STEPS) {
    const headers: Record<string, string> = { apikey: step.apikey?.(c) ?? t.publicKey };
    const bearer = step.bearer?.(c);
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const payload = step.body?.(c);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${t.url}${step.path}`, {
      method: step.method,
      headers,
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    const text = await res.text();
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const keys = keysOf(body).filter((k) => k !== 'details');
    const nested = ['session', 'user'].filter((k) => keysOf(body[k]).length).map((k) => `${k}: ${keysOf(body[k])}`);
    const seen: Observed = { step: step.name, status: res.status, keys: [...keys, ...nested] };
    if (res.status >= 400) seen.code = String(body.code);
    else step.save?.(c, body);
    const note = res.status < 400 ? step.note?.(c, body) : undefined;
    if (note) seen.note = note;
    out.push(seen);
  }
  return out;
}
