import { Type } from '@sinclair/typebox';
import { ApiError } from '../http/errors.js';
import type { App } from '../http/server.js';
import { EmailSendError, type ListQuery, type Messaging } from '../messaging/index.js';
import type { Guards } from './guard.js';

const ListParams = Type.Object(
  {
    limit: Type.Optional(Type.String()),
    offset: Type.Optional(Type.String()),
    to: Type.Optional(Type.String({ maxLength: 320 })),
    status: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const TestBody = Type.Object({ to: Type.String({ minLength: 3, maxLength: 320 }) }, { additionalProperties: false });

function int(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value)) throw new ApiError('invalid_parameter', `${name} must be a non-negative integer.`);
  return Math.min(Number(value), max);
}

function listQuery(q: Record<string, string | undefined>): ListQuery {
  if (q.status !== undefined && !['queued', 'sent', 'failed'].includes(q.status)) {
    throw new ApiError('invalid_parameter', 'status must be queued, sent or failed.');
  }
  if (q.channel !== undefined && !['email', 'sms'].includes(q.channel)) {
    throw new ApiError('invalid_parameter', 'channel must be email or sms.');
  }
  return {
    limit: int(q.limit, 'limit', 100, 1000),
    offset: int(q.offset, 'offset', 0, 1_000_000_000),
    to: q.to,
    status: q.status,
    channel: q.channel,
  };
}

// One address, no display name, no line breaks: the value becomes an SMTP envelope recipient.
const PLAIN_ADDRESS = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;

/**
 * The delivery log (`GET /api/v1/messages`), the dev inbox (`GET /api/v1/dev/inbox`) and a
 * test email (`POST /api/v1/email/test`), all with the secret key (API.md §3).
 * @example registerMessageRoutes(app, { messaging, guards })
 */
export function registerMessageRoutes(app: App, deps: { messaging: Messaging; guards: Guards }) {
  const { messaging, guards } = deps;
  app.get('/api/v1/messages', { preHandler: guards.service, schema: { querystring: ListParams } }, async (req) =>
    messaging.log(listQuery(req.query)),
  );
  app.get('/api/v1/dev/inbox', { preHandler: guards.service, schema: { querystring: ListParams } }, async (req) =>
    messaging.devInbox(listQuery(req.query)),
  );
  app.post('/api/v1/email/test', { preHandler: guards.service, schema: { body: TestBody } }, async (req) => {
    const to = req.body.to.trim();
    if (!PLAIN_ADDRESS.test(to)) throw new ApiError('invalid_email', 'to must be one email address, like ada@example.com.');
    try {
      const result = await messaging.sendTestEmail(to);
      return { sent: true, to, ...result };
    } catch (err) {
      if (err instanceof EmailSendError) {
        throw new ApiError('email_send_failed', `The SMTP server did not accept the test email: ${err.response}`, {
          response: err.response,
        });
      }
      throw err;
    }
  });
}
