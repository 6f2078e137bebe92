/**
 * The route table of `/api/v1/functions` (docs/functions.md): one route per method set, the
 * body handed to the function as it came (any content type, unparsed: a webhook's signature is
 * checked on the exact bytes), the function's answer sent as it gave it, and its failures in the
 * one error shape (`function_error` 500, `function_timeout` 504, `function_busy` 503).
 */
import { MASK } from '@plinth/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type App } from '../http/index.js';
import { CronError, parseCron } from '../lib/index.js';
import { DEPLOYED_RUNTIME } from './bundle.js';
import { MAX_BUNDLE_BYTES } from './deployed.js';
import { FUNCTION_NAME } from './discover.js';
import { SECRET_NAME, secretNames, writeSecret } from './secrets.js';
import type { Functions } from './index.js';
import type { CallOutcome } from './pool.js';

export const FUNCTION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Headers of a function's answer that the server sets itself. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Sends a function's answer as it gave it.
 * @example sendAnswer(reply, outcome);
 */
export function sendAnswer(reply: FastifyReply, out: Extract<CallOutcome, { ok: true }>): FastifyReply {
  reply.code(out.status);
  for (const [k, v] of out.headers) {
    if (OWN_HEADERS.has(k)) continue;
    if (k === 'set-cookie') {
      const prev = reply.getHeader('set-cookie');
      reply.header('set-cookie', prev === undefined ? [v] : [...(Array.isArray(prev) ? prev : [String(prev)]), v]);
    } else reply.header(k, v);
  }
  return reply.send(out.body ?? '');
}

/**
 * Mounts the routes in a scope of their own, whose one content-type parser hands the body
 * through as bytes (the JSON parsing of the rest of the API is untouched).
 * @example await registerFunctionRoutes(app, functions, 1024 * 1024);
 */
export async function registerFunctionRoutes(app: App, functions: Functions, bodyLimit: number): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest<{ Params: { name: string; '*'?: string } }>, reply: FastifyReply) => {
      const path = new URL(req.url, 'http://x');
      const out = await functions.dispatch(req, req.params.name, `${req.protocol}://${req.host}${path.pathname}${path.search}`);
      if (!out.ok)
        throw new ApiError(
          out.code,
          out.message,
          undefined,
          out.code === 'function_busy' ? { headers: { 'retry-after': '1' } } : undefined,
        );
      return sendAnswer(reply, out);
    };
    for (const url of ['/api/v1/functions/:name', '/api/v1/functions/:name/*'])
      scope.route({ method: [...FUNCTION_METHODS], url, handler });
  });
}

/**
 * THE route table of functions' management (docs/functions.md "Deploying"), under the
 * management guard (the secret key or a console admin; an end-user's token is refused 403):
 *
 * - `GET    /api/v1/admin/functions`                   the functions: `[{name, version, file, schedule}]`
 * - `PUT    /api/v1/admin/functions/:name`             deploy `{bundle, layout?, schedule?}` → 201 `{name, version, sha256, started}`
 * - `GET    /api/v1/admin/functions/:name/versions`    `[{version, sha256, size, created_at, schedule, live}]`, newest first
 * - `POST   /api/v1/admin/functions/:name/rollback`    `{to?}` → `{name, version, from}`
 * - `DELETE /api/v1/admin/functions/:name`             every deployed version → 204
 * - `GET    /api/v1/admin/functions/:name/calls`       the recent calls on every instance, newest first
 * - `GET    /api/v1/admin/function-schedules`          the schedules' state
 * - `GET    /api/v1/admin/function-secrets`            `[{name, value: "********"}]` (the stored ones and the folder's .env)
 * - `PUT    /api/v1/admin/function-secrets/:name`      `{value}` → 204, stored sealed in the database (the functions reload)
 * - `DELETE /api/v1/admin/function-secrets/:name`      204, or 404 `not_found`
 *
 * They live under /api/v1/admin because /api/v1/functions/:name is the functions' own URL (any method).
 * @example registerFunctionAdminRoutes(app, callers.operator(), functions);
 */
export function registerFunctionAdminRoutes(app: App, guard: (req: FastifyRequest) => Promise<void>, functions: Functions): void {
  const base = '/api/v1/admin/functions';
  type Named = FastifyRequest;
  const named = (req: Named): string => {
    const { name } = req.params as { name: string };
    if (!FUNCTION_NAME.test(name))
      throw new ApiError('invalid_request', `"${name}" is not a function name: letters, digits, - and _, starting with a letter or digit.`);
    return name;
  };
  const audit = (action: string) => ({ onRequest: guard, config: { audit: `function.${action}` } });
  app.get(base, { onRequest: guard, schema: { summary: 'The functions: the folder’s and the deployed' } }, () => functions.list());
  app.put(
    `${base}/:name`,
    { ...audit('deploy'), bodyLimit: Math.ceil(MAX_BUNDLE_BYTES * 1.2), schema: { summary: 'Deploy a bundle as the next version' } },
    async (req: Named, reply) => {
      const name = named(req);
      const body = (req.body ?? {}) as { bundle?: unknown; layout?: unknown; schedule?: unknown };
      if (typeof body.bundle !== 'string' || !body.bundle.includes(JSON.stringify(DEPLOYED_RUNTIME)))
        throw new ApiError(
          'invalid_request',
          'The body is {"bundle": "<code>", "layout": "plinth" | "supabase"}, the bundle made by plinth functions deploy.',
        );
      if (Buffer.byteLength(body.bundle) > MAX_BUNDLE_BYTES)
        throw new ApiError('payload_too_large', `The bundle is over ${MAX_BUNDLE_BYTES / 1024 / 1024} MB.`);
      const layout = body.layout ?? 'plinth';
      if (layout !== 'plinth' && layout !== 'supabase') throw new ApiError('invalid_request', 'layout is "plinth" or "supabase".');
      const schedule = body.schedule ?? null;
      if (schedule !== null) {
        if (typeof schedule !== 'string')
          throw new ApiError('invalid_request', 'schedule is a cron expression such as "*/5 * * * *", or null.');
        try {
          parseCron(schedule);
        } catch (err) {
          if (err instanceof CronError) throw new ApiError('invalid_request', `schedule: ${err.message}`);
          throw err;
        }
      }
      const out = await functions.deployed.deploy(name, layout, body.bundle, schedule);
      // The version's schedule is the one that runs (on every instance: the schedules are rows of the database).
      await functions.syncSchedules();
      // This instance starts the new version before answering; `started: false` says it did not start (its log has why).
      const started = await functions.warm(name);
      reply.code(201);
      return { name, ...out, started };
    },
  );
  app.get(`${base}/:name/versions`, { onRequest: guard, schema: { summary: "A function's deployed versions" } }, (req: Named) =>
    functions.deployed.versions(named(req)),
  );
  app.post(
    `${base}/:name/rollback`,
    { ...audit('rollback'), schema: { summary: 'Make an older version live (the previous one, or `to`)' } },
    async (req: Named) => {
      const name = named(req);
      const to = (req.body as { to?: unknown } | undefined)?.to;
      if (to !== undefined && (typeof to !== 'number' || !Number.isInteger(to) || to < 1))
        throw new ApiError('invalid_request', '"to" is a version number (plinth functions versions <name> lists them).');
      const out = await functions.deployed.rollback(name, to);
      await functions.syncSchedules();
      await functions.warm(name);
      return { name, ...out };
    },
  );
  app.delete(
    `${base}/:name`,
    { ...audit('delete'), schema: { summary: "Delete a function's deployed versions" } },
    async (req: Named, reply) => {
      const name = named(req);
      if (!(await functions.deployed.remove(name)))
        throw new ApiError(
          'function_not_found',
          `The function ${name} has no deployed version (a file of the project folder is deleted there).`,
        );
      await functions.syncSchedules();
      return reply.code(204).send();
    },
  );
  app.get(`${base}/:name/calls`, { onRequest: guard, schema: { summary: "A function's recent calls (every instance's)" } }, (req: Named) =>
    functions.calls(named(req)),
  );
  const secrets = '/api/v1/admin/function-secrets';
  const fileNames = () => (functions.folder ? secretNames(functions.folder.dir) : []);
  app.get(secrets, { onRequest: guard, schema: { summary: "The functions' secrets, masked" } }, async () =>
    [...new Set([...(await functions.secrets.names()), ...fileNames()])].sort().map((name) => ({ name, value: MASK })),
  );
  app.put(
    `${secrets}/:name`,
    { onRequest: guard, config: { audit: 'function.secret.set' }, schema: { summary: 'Set a secret (functions reload)' } },
    async (req, reply) => {
      const { name } = req.params as { name: string };
      const value = (req.body as { value?: unknown } | undefined)?.value;
      if (typeof value !== 'string') throw new ApiError('invalid_request', 'The body is {"value": "<the secret>"}.');
      if (!SECRET_NAME.test(name))
        throw new ApiError('invalid_request', `"${name}" is not a variable name (letters, digits and _, not starting with a digit).`);
      // Stored sealed in the database: every instance's functions get it (within SECRETS_TTL_MS). A
      // database that does not answer is its own error (503), not the caller's.
      await functions.secrets.set(name, value);
      functions.reload();
      return reply.code(204).send();
    },
  );
  app.delete(
    `${secrets}/:name`,
    { onRequest: guard, config: { audit: 'function.secret.unset' }, schema: { summary: 'Remove a secret (functions reload)' } },
    async (req, reply) => {
      const { name } = req.params as { name: string };
      let removed = await functions.secrets.remove(name);
      // One of this server's functions/.env (as plinth secrets set wrote it before): removed there.
      if (!removed && functions.folder && fileNames().includes(name)) {
        try {
          removed = writeSecret(functions.folder.dir, name, null);
        } catch (err) {
          throw new ApiError('invalid_request', `${(err as Error).message}.`);
        }
      }
      if (!removed) throw new ApiError('not_found', `No secret ${name}.`);
      functions.reload();
      return reply.code(204).send();
    },
  );
  app.get('/api/v1/admin/function-schedules', { onRequest: guard, schema: { summary: 'The schedules and their state' } }, async () =>
    functions.schedules ? functions.schedules.list() : [],
  );
}
