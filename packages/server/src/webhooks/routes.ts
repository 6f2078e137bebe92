/**
 * THE route table of database webhooks (docs/api.md "Database webhooks"): one line per endpoint,
 * the guard on the line (run at `onRequest`, so a refused request never has its body parsed).
 * `read` and `write` are the management guard app.ts hands in (secret key or console admin; the
 * admin cookie's changes under the CSRF rule): `write` for everything that changes a webhook or
 * sends a request, `read` for the lists.
 *
 * Bodies are described for the OpenAPI document but checked by validate.ts (`attachValidation`),
 * so a wrong body is one 400 `invalid_webhook` naming every field, as a form needs.
 */
import { Type } from '@sinclair/typebox';
import type { Webhook, WebhookCreated, WebhookDelivery, WebhookDeliveryDetail, WebhookSecretRotated } from '@plinth/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/index.js';
import { ApiError, Nullable, Timestamp, wireSchema } from '../http/index.js';

export interface WebhookHandlers {
  list(req: FastifyRequest): Promise<Webhook[]>;
  create(req: FastifyRequest, reply: FastifyReply): Promise<WebhookCreated>;
  get(req: FastifyRequest): Promise<Webhook>;
  update(req: FastifyRequest): Promise<Webhook>;
  remove(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  rotateSecret(req: FastifyRequest): Promise<WebhookSecretRotated>;
  deliveries(req: FastifyRequest, reply: FastifyReply): Promise<WebhookDelivery[]>;
  delivery(req: FastifyRequest): Promise<WebhookDeliveryDetail>;
  redeliver(req: FastifyRequest, reply: FastifyReply): Promise<WebhookDelivery>;
}

export interface WebhookGuards {
  read(req: FastifyRequest): Promise<void>;
  write(req: FastifyRequest): Promise<void>;
}

const Event = Type.Union([Type.Literal('insert'), Type.Literal('update'), Type.Literal('delete')]);
const Headers = Type.Record(Type.String(), Type.String(), { description: 'Extra request headers; values come back as "********".' });
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  table: Type.String({ description: 'A table of the public schema, with a primary key.' }),
  events: Type.Array(Event, { minItems: 1, maxItems: 3, description: 'Default: all three.' }),
  url: Type.String({ maxLength: 2048, description: 'An http(s) URL.' }),
  filter: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
    description: 'REST filters ANDed with & (not. and or=(…)/and=(…) groups too), e.g. eq.status=paid',
  }),
  headers: Headers,
  enabled: Type.Boolean({ description: 'Default: true.' }),
};
const CreateBody = Type.Object({
  name: Fields.name,
  table: Fields.table,
  url: Fields.url,
  events: Type.Optional(Fields.events),
  filter: Type.Optional(Fields.filter),
  headers: Type.Optional(Fields.headers),
  enabled: Type.Optional(Fields.enabled),
});
const PatchBody = Type.Partial(Type.Object(Fields));
// Answers: each checked against its wire type of packages/shared (http/wire.ts).
const WebhookFields = {
  id: Type.String(),
  ...Fields,
  created_at: Timestamp,
  updated_at: Timestamp,
  previous_secret_expires_at: Nullable(Timestamp),
  queued: Type.Integer({ description: 'Deliveries waiting to be sent.' }),
};
const WebhookOut = wireSchema<Webhook>()(Type.Object(WebhookFields));
const CreatedOut = wireSchema<WebhookCreated>()(
  Type.Object({ ...WebhookFields, secret: Type.String({ description: 'The signing secret, shown this once.' }) }),
);
const DeliveryFields = {
  id: Type.String(),
  webhook_id: Type.String(),
  seq: Type.Integer(),
  event: Event,
  table: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('sent'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  response_status: Nullable(Type.Integer()),
  response: Nullable(Type.String()),
  duration_ms: Nullable(Type.Integer()),
  truncated: Type.Boolean(),
  redelivery_of: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  sent_at: Nullable(Timestamp),
  next_attempt_at: Nullable(Timestamp),
};
const DeliveryOut = wireSchema<WebhookDelivery>()(Type.Object(DeliveryFields));
const DeliveryDetailOut = wireSchema<WebhookDeliveryDetail>()(
  Type.Object({ ...DeliveryFields, body: Type.String({ description: 'The JSON body each attempt POSTs.' }) }),
);
const IdParams = Type.Object({ id: Type.String() });
const DeliveryParams = Type.Object({ id: Type.String(), delivery_id: Type.String() });
const DeliveryQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('queued'), Type.Literal('sent'), Type.Literal('failed')])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
});
const RotateBody = Type.Object({
  revoke: Type.Optional(Type.Boolean({ description: 'Stop the old secret at once (default: it also signs for 24 hours).' })),
});
const RotatedOut = wireSchema<WebhookSecretRotated>()(
  Type.Object({ secret: Type.String(), previous_secret_expires_at: Nullable(Timestamp) }),
);

/** A body, params or query Fastify could not match to its schema: validate.ts decides, the rest are ours to refuse here. */
const unchecked = { attachValidation: true } as const;

/**
 * Mounts `/api/v1/webhooks…`.
 * @example registerWebhookRoutes(app, { read: manage, write: manage }, handlers);
 */
export function registerWebhookRoutes(app: App, g: WebhookGuards, h: WebhookHandlers): void {
  const r = { onRequest: g.read };
  // A change carries its audit log name (admin/audit.ts records it once it has succeeded).
  const w = (action: string) => ({ onRequest: g.write, config: { audit: `webhook.${action}` } });
  const base = '/api/v1/webhooks';
  app.get(base, { ...r, schema: { summary: 'The webhooks', response: { 200: Type.Array(WebhookOut) } } }, h.list);
  app.post(
    base,
    {
      ...w('create'),
      ...unchecked,
      schema: { summary: 'Create a webhook (answers its signing secret, once)', body: CreateBody, response: { 201: CreatedOut } },
    },
    h.create,
  );
  app.get(`${base}/:id`, { ...r, schema: { summary: 'A webhook', params: IdParams, response: { 200: WebhookOut } } }, h.get);
  app.patch(
    `${base}/:id`,
    {
      ...w('update'),
      ...unchecked,
      schema: { summary: 'Change a webhook (any of its fields)', params: IdParams, body: PatchBody, response: { 200: WebhookOut } },
    },
    h.update,
  );
  app.delete(`${base}/:id`, { ...w('delete'), schema: { summary: 'Delete a webhook and its delivery log', params: IdParams } }, h.remove);
  app.post(
    `${base}/:id/secret/rotate`,
    {
      ...w('secret.rotate'),
      ...unchecked,
      schema: { summary: 'A new signing secret (shown once)', params: IdParams, body: RotateBody, response: { 200: RotatedOut } },
    },
    h.rotateSecret,
  );
  app.get(
    `${base}/:id/deliveries`,
    {
      ...r,
      ...unchecked,
      schema: {
        summary: "A webhook's delivery log, newest first",
        params: IdParams,
        querystring: DeliveryQuery,
        response: { 200: Type.Array(DeliveryOut) },
      },
    },
    h.deliveries,
  );
  app.get(
    `${base}/:id/deliveries/:delivery_id`,
    { ...r, schema: { summary: 'A delivery and its body', params: DeliveryParams, response: { 200: DeliveryDetailOut } } },
    h.delivery,
  );
  app.post(
    `${base}/:id/deliveries/:delivery_id/redeliver`,
    {
      ...w('redeliver'),
      schema: {
        summary: 'Send a delivery again (queued at the end of its queue)',
        params: DeliveryParams,
        response: { 201: DeliveryOut },
      },
    },
    h.redeliver,
  );
}

/** A query value of the delivery log, checked here (its schema only documents it). */
export function deliveryQuery(q: unknown): { limit: number; offset: number; status?: 'queued' | 'sent' | 'failed' } {
  const query = (q ?? {}) as Record<string, unknown>;
  const int = (name: string, v: unknown, fallback: number, min: number, max: number) => {
    if (v === undefined) return fallback;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ApiError('invalid_parameter', `"${name}" must be an integer from ${min} to ${max}.`, { parameter: name });
    }
    return n;
  };
  const status = query.status;
  if (status !== undefined && status !== 'queued' && status !== 'sent' && status !== 'failed') {
    throw new ApiError('invalid_parameter', '"status" must be queued, sent or failed.', { parameter: 'status' });
  }
  return {
    limit: int('limit', query.limit, 50, 1, 200),
    offset: int('offset', query.offset, 0, 0, 1_000_000_000),
    ...(status ? { status } : {}),
  };
}
