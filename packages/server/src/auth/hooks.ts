import { createHmac, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db, Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, createGuardedFetch } from '../lib/index.js';

/**
 * Auth hooks (docs/auth.md, "Auth hooks"): the project's own code asked at two points, as
 * Supabase's are. `custom_access_token` is given `{user_id, claims, authentication_method}`
 * before each access token is signed and returns `{claims}`; `before_user_created` is given
 * `{metadata, user}` before a user is inserted and returns `{}` (go on) or
 * `{error: {http_code, message}}` (refuse). A hook that throws, times out or answers anything
 * else refuses the sign-in (500 `hook_failed`); a hook's own `error` refuses with its message
 * (`hook_refused`, its 4xx `http_code`, else 500).
 */
export type HookName = 'custom_access_token' | 'before_user_created' | 'send_email' | 'send_sms';

/**
 * Where a hook runs: a SQL function (`pg-functions://postgres/<schema>/<function>`), a project
 * function (`function:<name>`), or, for the send hooks only, an http(s) URL POSTed to and signed
 * the Standard Webhooks way with `secrets` (`v1,whsec_<base64>`).
 */
export type HookTarget =
  | { kind: 'sql'; schema: string; name: string }
  | { kind: 'function'; name: string }
  | { kind: 'http'; url: string; secrets: string[] };

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const FUNCTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * A hook setting as a target, or a sentence saying what is wrong with it (null: no hook).
 * @example hookTarget('pg-functions://postgres/public/claims_hook') // { kind: 'sql', schema: 'public', name: 'claims_hook' }
 */
export function hookTarget(uri: unknown): HookTarget | string | null {
  if (uri === null || uri === undefined || uri === '') return null;
  if (typeof uri !== 'string') return 'must be a string (pg-functions://postgres/<schema>/<function> or function:<name>) or null';
  const sql = /^pg-functions:\/\/postgres\/([^/]+)\/([^/]+)$/.exec(uri);
  if (sql) {
    const [, schema, name] = sql as unknown as [string, string, string];
    if (!IDENT.test(schema) || !IDENT.test(name)) return 'the schema and function must be plain SQL names (letters, digits, _)';
    if (['auth', 'plinth', 'pg_catalog', 'information_schema', 'realtime', 'storage'].includes(schema))
      return `the hook's function must be the project's own, not in the ${schema} schema`;
    return { kind: 'sql', schema, name };
  }
  const fn = /^function:(.+)$/.exec(uri);
  if (fn) return FUNCTION_NAME.test(fn[1] as string) ? { kind: 'function', name: fn[1] as string } : 'function:<name> must name a function';
  if (/^https?:\/\//i.test(uri)) return URL.canParse(uri) ? { kind: 'http', url: uri, secrets: [] } : 'the URL cannot be parsed';
  return 'must be pg-functions://postgres/<schema>/<function> or function:<name>';
}

/**
 * The Standard Webhooks headers of `body` (as Supabase signs its HTTP hooks): `webhook-id`,
 * `webhook-timestamp` (seconds) and `webhook-signature`, one `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` per secret (`v1,whsec_<base64 key>`), space-separated.
 * @example signHook('{"a":1}', ['v1,whsec_c2VjcmV0c2VjcmV0c2VjcmV0'], 1700000000)
 */
export function signHook(body: string, secrets: string[], nowSeconds: number, id = `msg_${randomUUID()}`): Record<string, string> {
  const signatures = secrets.map((s) => {
    const key = Buffer.from(s.replace(/^v1,/, '').replace(/^whsec_/, ''), 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${nowSeconds}.${body}`).digest('base64')}`;
  });
  return { 'webhook-id': id, 'webhook-timestamp': String(nowSeconds), 'webhook-signature': signatures.join(' ') };
}

/** How a `function:<name>` hook is called (the functions area, plugged in by the composition root). */
export type FunctionHookRunner = (name: string, body: string) => Promise<{ status: number; body: string }>;

/** Runs one hook: the target, its event; answers the parsed JSON (or null) or throws. */
export interface HookRunner {
  run(target: HookTarget, event: unknown, tx: Queryable | null): Promise<unknown>;
}

const TIMEOUT_MS = 2000;
/** An http(s) send hook's whole answer (Supabase's HTTP hooks: 5 s). */
const HTTP_TIMEOUT_MS = 5000;
/** A hook's answer larger than this is refused (claims end up in every request's header). */
const MAX_ANSWER = 16 * 1024;

/**
 * The runner of SQL-function hooks (in the caller's transaction when there is one, as GoTrue
 * does, with a 2 s statement timeout), and of `function:<name>` hooks through `functions`.
 * @example const runner = createHookRunner(db, () => null);
 */
export function createHookRunner(
  db: Db,
  functions: () => FunctionHookRunner | null,
  http: { allowPrivate: boolean; now: () => number } = { allowPrivate: false, now: Date.now },
): HookRunner {
  // An http(s) hook reaches what a database webhook may (WEBHOOK_ALLOW_PRIVATE, docs/webhooks.md):
  // unless allowed, loopback, private, link-local and metadata addresses are refused, on the
  // address connected to; redirects are never followed.
  const guarded = http.allowPrivate ? null : createGuardedFetch({ advice: 'WEBHOOK_ALLOW_PRIVATE=true allows it' });
  return {
    async run(target, event, tx) {
      const body = JSON.stringify(event);
      let out: string | null;
      if (target.kind === 'http') {
        const headers = { 'content-type': 'application/json', ...signHook(body, target.secrets, Math.floor(http.now() / 1000)) };
        const init = { method: 'POST', headers, body, redirect: 'manual' as const, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) };
        const res = guarded ? await guarded(target.url, init) : await fetch(target.url, init);
        const text = await res.text();
        if (res.status < 200 || res.status > 299) {
          // A hook's own refusal may come with a 4xx and `{error: {http_code, message}}`.
          try {
            const parsed = JSON.parse(text) as unknown;
            if (isObject(parsed) && isObject(parsed.error)) return parsed;
          } catch {
            // not JSON: a failure
          }
          throw new Error(`${new URL(target.url).origin} answered ${res.status}`);
        }
        // A 2xx is taken: its body is read only when it is JSON (a send hook owes no answer).
        try {
          JSON.parse(text);
          out = text;
        } catch {
          out = null;
        }
      } else if (target.kind === 'sql') {
        const call = async (q: Queryable) => {
          await q.query(`set local statement_timeout = ${TIMEOUT_MS}`);
          const { rows } = await q.query<{ out: string | null }>(`select ("${target.schema}"."${target.name}"($1::jsonb))::text as out`, [
            body,
          ]);
          await q.query('set local statement_timeout to default');
          return rows[0]?.out ?? null;
        };
        out = tx ? await call(tx) : await db.transaction(call);
      } else {
        const runner = functions();
        if (!runner) throw new Error(`function:${target.name}: no functions are served here`);
        const answer = await runner(target.name, body);
        if (answer.status < 200 || answer.status > 299) throw new Error(`function:${target.name} answered ${answer.status}`);
        out = answer.body;
      }
      if (out === null || out === '') return null;
      if (out.length > MAX_ANSWER) throw new Error(`the answer is over ${MAX_ANSWER} bytes`);
      return JSON.parse(out);
    },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Claims a custom access-token hook may not change: who and what the token is for, the session
 * and its level (the server checks them against the session, docs/securing-accounts.md), the
 * addresses and whether they are proven (policies trust them), and the registered claims the
 * signer sets. Left out of the answer, they are put back; changed, the hook is refused.
 */
export const FIXED_CLAIMS = [
  'sub',
  'aud',
  'iss',
  'exp',
  'iat',
  'nbf',
  'jti',
  'session_id',
  'aal',
  'amr',
  'is_anonymous',
  'email',
  'email_verified',
  'phone',
  'phone_verified',
] as const;
/** The only database role a user's token may name (`anon`, `service_role`, `postgres`… would be a step up or sideways). */
const USER_ROLE = 'authenticated';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The hook's own refusal, `{error: {http_code, message}}` (GoTrue's hookserrors), as an ApiError; else null. */
function refusalOf(out: unknown, hook: HookName): ApiError | null {
  if (!isObject(out) || !isObject(out.error)) return null;
  const message = out.error.message;
  if (typeof message !== 'string' || !message) return null;
  const code = out.error.http_code;
  const status = typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
  return new ApiError('hook_refused', message.slice(0, 500), { hook }, { status });
}

export interface AuthHooks {
  /**
   * The claims to sign, as the custom access-token hook returned them (checked), or `claims`
   * itself when no hook is set. Throws ApiError `hook_failed` or `hook_refused`.
   */
  accessToken(userId: string, claims: Record<string, unknown>, method: string): Promise<Record<string, unknown>>;
  /** Asks the before-user-created hook about `user` (in the transaction that inserts it); throws to refuse. */
  beforeUserCreated(tx: Queryable, user: Record<string, unknown>): Promise<void>;
  /** Whether a send-email (`email`) or send-SMS (`sms`) hook is set: then Plinth sends nothing of that channel itself. */
  sends(channel: 'email' | 'sms'): boolean;
  /**
   * Hands one message to the send hook of `channel` (GoTrue's `{user, email_data}` or `{user,
   * sms: {otp}}`). Throws ApiError `send_hook_failed` (502: unreachable, timed out, refused
   * address, an answer other than 2xx or JSON) or `hook_refused` (its own `error`).
   */
  send(channel: 'email' | 'sms', payload: Record<string, unknown>, tx: Queryable | null): Promise<void>;
}

/**
 * The two hooks of the settings (`hooks.custom_access_token`, `hooks.before_user_created`).
 * @example const hooks = createAuthHooks(runner, () => settings.auth().hooks, clock, log);
 */
export function createAuthHooks(
  runner: HookRunner,
  settings: () =>
    | ({ custom_access_token: string | null; before_user_created: string | null } & {
        send_email?: string | null;
        send_sms?: string | null;
        send_email_secrets?: string | null;
        send_sms_secrets?: string | null;
      })
    | undefined,
  clock: Clock,
  log: Logger,
): AuthHooks {
  const failed = (hook: HookName, why: string, err?: unknown) => {
    log.error({ err, hook, why }, 'auth: hook failed');
    const what = {
      custom_access_token: 'custom access-token hook',
      before_user_created: 'before-user-created hook',
      send_email: 'send-email hook',
      send_sms: 'send-SMS hook',
    }[hook];
    if (hook === 'send_email' || hook === 'send_sms')
      return new ApiError('send_hook_failed', `The project's ${what} failed (${why}); nothing was sent. Try again later.`, { hook });
    return new ApiError('hook_failed', `The ${what} failed (${why}); the request is refused.`, { hook });
  };
  const targetOf = (hook: HookName): HookTarget | null => {
    const t = hookTarget(settings()?.[hook] ?? null);
    if (typeof t === 'string') throw failed(hook, `its setting ${t}`);
    if (t?.kind === 'http') {
      if (hook !== 'send_email' && hook !== 'send_sms') throw failed(hook, 'its setting is a URL; only the send hooks may be http(s)');
      const secrets = (settings()?.[`${hook}_secrets`] ?? '').split('|').filter((s) => /^v1,whsec_/.test(s));
      if (!secrets.length) throw failed(hook, 'an http(s) hook needs its secrets (v1,whsec_…) to sign with');
      return { ...t, secrets };
    }
    return t;
  };
  const metadata = (name: string) => ({ uuid: randomUUID(), time: new Date(clock.now()).toISOString(), name });

  return {
    async accessToken(userId, claims, method) {
      const target = targetOf('custom_access_token');
      if (!target) return claims;
      let out: unknown;
      try {
        out = await runner.run(
          target,
          { metadata: metadata('customize-access-token'), user_id: userId, claims, authentication_method: method },
          null,
        );
      } catch (err) {
        throw failed('custom_access_token', 'it threw or did not answer JSON', err);
      }
      const refused = refusalOf(out, 'custom_access_token');
      if (refused) throw refused;
      if (!isObject(out) || !isObject(out.claims)) throw failed('custom_access_token', 'its answer has no claims object');
      const next: Record<string, unknown> = { ...out.claims };
      for (const key of FIXED_CLAIMS) {
        if (!(key in claims)) {
          if (key in next) throw failed('custom_access_token', `it may not add the ${key} claim`);
          continue;
        }
        if (key in next && !same(next[key], claims[key])) throw failed('custom_access_token', `it may not change the ${key} claim`);
        next[key] = claims[key];
      }
      if ('role' in next && next.role !== USER_ROLE) throw failed('custom_access_token', `role must stay ${USER_ROLE}`);
      next.role = USER_ROLE;
      for (const key of ['user_metadata', 'app_metadata'] as const)
        if (key in next && !isObject(next[key])) throw failed('custom_access_token', `${key} must be an object`);
      return next;
    },

    async beforeUserCreated(tx, user) {
      const target = targetOf('before_user_created');
      if (!target) return;
      let out: unknown;
      try {
        out = await runner.run(target, { metadata: metadata('before-user-created'), user }, tx);
      } catch (err) {
        throw failed('before_user_created', 'it threw or did not answer JSON', err);
      }
      const refused = refusalOf(out, 'before_user_created');
      if (refused) throw refused;
      if (out !== null && !isObject(out)) throw failed('before_user_created', 'its answer is not an object');
    },

    sends(channel) {
      return Boolean(settings()?.[channel === 'email' ? 'send_email' : 'send_sms']);
    },

    async send(channel, payload, tx) {
      const hook = channel === 'email' ? 'send_email' : 'send_sms';
      const target = targetOf(hook);
      if (!target) return;
      let out: unknown;
      try {
        // SQL hooks run in the caller's transaction, as the other hooks; an HTTP or function hook
        // is called while it is open (GoTrue's order: the message is handed over before commit).
        out = await runner.run(target, { metadata: metadata(hook === 'send_email' ? 'send-email' : 'send-sms'), ...payload }, tx);
      } catch (err) {
        const why = err instanceof Error && err.name === 'TimeoutError' ? 'it timed out' : 'it could not be reached or did not answer 2xx';
        throw failed(hook, why, err instanceof Error ? err.message : String(err));
      }
      const refused = refusalOf(out, hook);
      if (refused) throw refused;
    },
  };
}
