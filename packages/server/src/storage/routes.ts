/**
 * THE route table of /api/v1/storage (docs/storage.md): one line per endpoint, its guard on
 * the line, run at `onRequest` (before the body is read), and the audit log's name of each
 * change. Who is calling is http/guards.ts's, as for every area:
 * - `manage`: the secret key, or a console admin (a `viewer` reads only): buckets;
 * - `caller`: any key or user token, or the console's cookie as the secret key (a key always
 *   decides over the cookie): objects, under the project's policies on storage.objects;
 * - none: signed URLs and public buckets, read without a key.
 * Handlers are in handlers/; uploads are mounted in a scope whose body is the raw stream.
 */
import type { FastifyRequest } from 'fastify';
import type { App, CallerGuards } from '../http/index.js';
import type { createBucketHandlers } from './handlers/buckets.js';
import type { createLinkHandlers } from './handlers/links.js';
import { callerOf, type createObjectHandlers } from './handlers/objects.js';
import { acceptRawBodies } from './handlers/raw-body.js';
import type { Resumable } from './resumable.js';
import { ROUTES as R } from './schemas.js';

export interface StorageHandlers {
  buckets: ReturnType<typeof createBucketHandlers>;
  objects: ReturnType<typeof createObjectHandlers>;
  links: ReturnType<typeof createLinkHandlers>;
}

const OBJECT = '/api/v1/storage/object/:bucket';
const RESUMABLE = '/api/v1/storage/upload/resumable';
const GET_HEAD: Array<'GET' | 'HEAD'> = ['GET', 'HEAD'];
/** Buckets are always an admin action; objects only when the console made the change (apps write objects all day). */
const audit = (action: string) => ({ config: { audit: action } });
const consoleAudit = (action: string) => ({ config: { audit: action, auditConsoleOnly: true } });

/**
 * @example await registerStorageRoutes(app, callers, { buckets: createBucketHandlers(b), objects: createObjectHandlers(o), links: createLinkHandlers(o, links, signed) });
 */
export async function registerStorageRoutes(
  app: App,
  callers: CallerGuards,
  resumable: Resumable,
  maxFileSize: number,
  h: StorageHandlers,
): Promise<void> {
  const manage = callers.operator();
  const caller = async (req: Parameters<typeof callers.appOrConsole>[0]) => void (await callers.appOrConsole(req));
  const { buckets, objects, links } = h;

  app.post('/api/v1/storage/buckets', { onRequest: manage, schema: R.bucketCreate, ...audit('bucket.create') }, buckets.create);
  app.get('/api/v1/storage/buckets', { onRequest: manage, schema: R.bucketList }, buckets.list);
  app.get('/api/v1/storage/buckets/:name', { onRequest: manage, schema: R.bucketGet }, buckets.get);
  app.patch('/api/v1/storage/buckets/:name', { onRequest: manage, schema: R.bucketUpdate, ...audit('bucket.update') }, buckets.update);
  app.delete('/api/v1/storage/buckets/:name', { onRequest: manage, schema: R.bucketDelete, ...audit('bucket.delete') }, buckets.remove);

  app.route({ method: GET_HEAD, url: `${OBJECT}/*`, onRequest: caller, schema: R.download, handler: objects.download });
  app.get(OBJECT, { onRequest: caller, schema: R.list }, objects.list);
  app.delete(`${OBJECT}/*`, { onRequest: caller, schema: R.remove, ...consoleAudit('object.delete') }, objects.remove);
  app.delete(OBJECT, { onRequest: caller, schema: R.removeMany, ...consoleAudit('object.delete') }, objects.removeMany);
  app.post(`${OBJECT}/move`, { onRequest: caller, schema: R.move, ...consoleAudit('object.move') }, objects.move);
  app.post(`${OBJECT}/copy`, { onRequest: caller, schema: R.copy, ...consoleAudit('object.copy') }, objects.copy);

  app.post('/api/v1/storage/sign/:bucket/*', { onRequest: caller, schema: R.sign, ...consoleAudit('object.sign') }, links.sign);
  app.route({ method: GET_HEAD, url: '/api/v1/storage/sign/:bucket/*', schema: R.signedDownload, handler: links.signedDownload });
  app.route({ method: GET_HEAD, url: '/api/v1/storage/public/:bucket/*', schema: R.publicDownload, handler: links.publicDownload });

  // Resumable uploads (TUS 1.0.0): the same guard as a plain upload; the upload is its creator's.
  type Id = FastifyRequest<{ Params: { id: string } }>;
  app.head(`${RESUMABLE}/:id`, { onRequest: caller }, (req: Id, reply) => resumable.head(req, reply, callerOf(req)));
  app.delete(`${RESUMABLE}/:id`, { onRequest: caller }, (req: Id, reply) => resumable.remove(req, reply, callerOf(req)));
  app.options(RESUMABLE, (req, reply) => resumable.options(req, reply, maxFileSize));

  await app.register(async (raw) => {
    acceptRawBodies(raw as unknown as App);
    raw.post(RESUMABLE, { onRequest: caller, ...consoleAudit('object.upload') }, (req, reply) =>
      resumable.create(req, reply, callerOf(req), RESUMABLE),
    );
    raw.patch(`${RESUMABLE}/:id`, { onRequest: caller }, (req: Id, reply) => resumable.patch(req, reply, callerOf(req)));
    raw.route({
      method: ['POST', 'PUT'],
      url: `${OBJECT}/*`,
      onRequest: caller,
      schema: R.upload,
      ...consoleAudit('object.upload'),
      handler: objects.upload,
    });
  });
}
