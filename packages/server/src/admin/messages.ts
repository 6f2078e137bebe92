import { TEMPLATE_KINDS } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import { DEFAULT_TEMPLATES, SendError, type EmailKind, type ListQuery, type Messaging, renderEmail } from '../messaging/index.js';

export const MessageListParams = Type.Object(
  {
    limit: Type.Optional(Type.String()),
    offset: Type.Optional(Type.String()),
    to: Type.Optional(Type.String({ maxLength: 320 })),
    status: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const TestEmailBody = Type.Object({ to: Type.String({ minLength: 3, maxLength: 320 }) }, { additionalProperties: false });

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

const TEMPLATE_TEXT = Type.String({ maxLength: 100_000 });
export const PreviewBody = Type.Object(
  {
    kind: Type.Union(TEMPLATE_KINDS.map((k) => Type.Literal(k))),
    template: Type.Optional(
      Type.Object(
        { subject: Type.Optional(TEMPLATE_TEXT), html: Type.Optional(TEMPLATE_TEXT), text: Type.Optional(TEMPLATE_TEXT) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

type Query = FastifyRequest<{ Querystring: Record<string, string | undefined> }>;

/**
 * The delivery log (`GET /api/v1/messages`), the dev inbox (`GET /api/v1/dev/inbox`), a test
 * email (`POST /api/v1/email/test`), the built-in templates (`GET /api/v1/email/templates/defaults`)
 * and a template preview (`POST /api/v1/email/preview`, rendered by the very renderer that sends mail). Mounted by routes.ts.
 * @example const h = createMessageHandlers(messaging, () => 'Acme'); app.get('/api/v1/messages', { onRequest: guards.manage }, h.log)
 */
export function createMessageHandlers(messaging: Messaging, projectName: () => string) {
  return {
    log: async (req: Query) => messaging.log(listQuery(req.query)),
    devInbox: async (req: Query) => messaging.devInbox(listQuery(req.query)),
    /** The built-in templates, by kind, as written (with their `{{variables}}`): what an override starts from. */
    defaults: async () => Object.fromEntries(TEMPLATE_KINDS.map((k) => [k, DEFAULT_TEMPLATES[k]])),
    preview: async (req: FastifyRequest<{ Body: { kind: string; template?: { subject?: string; html?: string; text?: string } } }>) => {
      const kind = req.body.kind as EmailKind;
      const vars = {
        link: 'https://app.example.com/page?token=preview-token',
        email: 'ada@example.com',
        new_email: 'ada.new@example.com',
        code: '123456',
        project: projectName(),
      };
      return renderEmail(kind, vars, req.body.template ? { [kind]: req.body.template } : {});
    },
    testEmail: async (req: FastifyRequest<{ Body: { to: string } }>) => {
      const to = req.body.to.trim();
      if (!PLAIN_ADDRESS.test(to)) throw new ApiError('invalid_email', 'to must be one email address, like ada@example.com.');
      try {
        const result = await messaging.sendTestEmail(to);
        return { sent: true, to, ...result };
      } catch (err) {
        if (err instanceof SendError) {
          throw new ApiError('email_send_failed', `The SMTP server did not accept the test email: ${err.response}`, {
            response: err.response,
          });
        }
        throw err;
      }
    },
  };
}
