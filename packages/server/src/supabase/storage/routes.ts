/**
 * THE route table of `/storage/v1` (docs/supabase.md, "/storage/v1"): Supabase Storage's paths,
 * one line each, the guard on the line, on storage's services. Guards are the ones storage's own
 * table uses (http/guards.ts): buckets need the secret key (or a console admin), objects any
 * key or user token (not the console's cookie: the console speaks /api/v1), signed URLs and public
 * buckets none. Every error leaves in Supabase's shape (errors.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { App, CallerGuards } from '../../http/index.js';
import { acceptRawBodies, type Storage } from '../../storage/index.js';
import { createBucketHandlers } from './buckets.js';
import { toSupabaseErrors } from './errors.js';
import { createObjectHandlers } from './objects.js';
import * as S from './shapes.js';

const GET_HEAD: Array<'GET' | 'HEAD'> = ['GET', 'HEAD'];
const O = '/object';
const TUS = '/upload/resumable';
/** Buckets are always an admin action (the audit log's names, as storage's table has them). */
const audit = (action: string) => ({ config: { audit: action } });

/**
 * @example await registerSupabaseStorageRoutes(app, callers, storage);
 */
export async function registerSupabaseStorageRoutes(app: App, callers: CallerGuards, storage: Storage): Promise<void> {
  const manage = callers.operator();
  const caller = async (req: Parameters<typeof callers.callerOf>[0]) => void (await callers.callerOf(req));
  const b = createBucketHandlers(storage);
  const o = createObjectHandlers(storage);

  await app.register(
    async (plain) => {
      const scope = plain as unknown as App;
      scope.addHook('onSend', toSupabaseErrors);

      scope.get('/bucket', { onRequest: manage, schema: { querystring: S.BucketListQuery } }, b.list);
      scope.post('/bucket', { onRequest: manage, schema: { body: S.BucketBody }, ...audit('bucket.create') }, b.create);
      scope.get('/bucket/:id', { onRequest: manage, schema: { params: S.IdParams } }, b.get);
      scope.put(
        '/bucket/:id',
        { onRequest: manage, schema: { params: S.IdParams, body: S.BucketBody }, ...audit('bucket.update') },
        b.update,
      );
      scope.delete('/bucket/:id', { onRequest: manage, schema: { params: S.IdParams }, ...audit('bucket.delete') }, b.remove);
      scope.post('/bucket/:id/empty', { onRequest: manage, schema: { params: S.IdParams }, ...audit('bucket.empty') }, b.empty);

      scope.route({
        method: GET_HEAD,
        url: `${O}/:bucket/*`,
        onRequest: caller,
        schema: { querystring: S.DownloadQuery },
        handler: o.download,
      });
      scope.route({
        method: GET_HEAD,
        url: `${O}/authenticated/:bucket/*`,
        onRequest: caller,
        schema: { querystring: S.DownloadQuery },
        handler: o.download,
      });
      scope.route({ method: GET_HEAD, url: `${O}/public/:bucket/*`, schema: { querystring: S.DownloadQuery }, handler: o.publicDownload });
      scope.route({ method: GET_HEAD, url: `${O}/sign/:bucket/*`, schema: { querystring: S.TokenQuery }, handler: o.signedDownload });
      // Image transforms (storage's transform.ts): after the read's own check, as a download.
      const R = '/render/image';
      scope.route({
        method: GET_HEAD,
        url: `${R}/authenticated/:bucket/*`,
        onRequest: caller,
        schema: { querystring: S.RenderQuery },
        handler: o.renderAuthenticated,
      });
      scope.route({ method: GET_HEAD, url: `${R}/public/:bucket/*`, schema: { querystring: S.RenderQuery }, handler: o.renderPublic });
      scope.route({ method: GET_HEAD, url: `${R}/sign/:bucket/*`, schema: { querystring: S.TokenQuery }, handler: o.renderSigned });
      scope.get(`${O}/info/:bucket/*`, { onRequest: caller }, o.info);
      scope.get(`${O}/info/authenticated/:bucket/*`, { onRequest: caller }, o.info);
      scope.get(`${O}/info/public/:bucket/*`, {}, o.publicInfo);

      scope.post(`${O}/list/:bucket`, { onRequest: caller, schema: { params: S.BucketParams, body: S.ListBody } }, o.list);
      scope.post(`${O}/list-v2/:bucket`, { onRequest: caller, schema: { params: S.BucketParams, body: S.ListV2Body } }, o.listV2);
      scope.delete(`${O}/:bucket`, { onRequest: caller, schema: { params: S.BucketParams, body: S.RemoveBody } }, o.removeMany);
      scope.delete(`${O}/:bucket/*`, { onRequest: caller }, o.remove);
      scope.post(`${O}/move`, { onRequest: caller, schema: { body: S.MoveBody } }, o.move);
      scope.post(`${O}/copy`, { onRequest: caller, schema: { body: S.MoveBody } }, o.copy);
      scope.post(`${O}/sign/:bucket/*`, { onRequest: caller, schema: { body: S.SignBody } }, o.sign);
      scope.post(`${O}/sign/:bucket`, { onRequest: caller, schema: { params: S.BucketParams, body: S.SignManyBody } }, o.signMany);
      scope.post(`${O}/upload/sign/:bucket/*`, { onRequest: caller }, o.signUpload);

      // Resumable uploads (TUS 1.0.0) on storage's resumable.ts: the upload ends in the plain upload.
      const tus = storage.resumable;
      const who = (req: FastifyRequest) => {
        if (!req.principal) throw new Error('supabase storage: a resumable route has no caller guard');
        return req.principal;
      };
      type Id = FastifyRequest<{ Params: { id: string } }>;
      scope.head(`${TUS}/:id`, { onRequest: caller }, (req: Id, reply) => tus.head(req, reply, who(req)));
      scope.delete(`${TUS}/:id`, { onRequest: caller }, (req: Id, reply) => tus.remove(req, reply, who(req)));
      scope.options(TUS, (req, reply) => tus.options(req, reply, storage.maxFileSize));

      // Uploads: the body is the request stream (raw, or a multipart form read as it arrives).
      await scope.register(async (plainRaw) => {
        const raw = plainRaw as unknown as App;
        acceptRawBodies(raw);
        raw.route({ method: ['POST', 'PUT'], url: `${O}/:bucket/*`, onRequest: caller, handler: o.upload });
        raw.route({ method: 'PUT', url: `${O}/upload/sign/:bucket/*`, schema: { querystring: S.TokenQuery }, handler: o.uploadSigned });
        raw.post(TUS, { onRequest: caller }, (req, reply) => tus.create(req, reply, who(req), `/storage/v1${TUS}`));
        raw.patch(`${TUS}/:id`, { onRequest: caller }, (req: Id, reply) => tus.patch(req, reply, who(req)));
      });
    },
    { prefix: '/storage/v1' },
  );
}
