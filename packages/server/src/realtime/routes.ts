/**
 * The realtime route table (docs/realtime.md): the WebSocket endpoint and the management of which
 * tables are captured, each guard on its line.
 */
import websocket from '@fastify/websocket';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { App } from '../http/index.js';
import type { RealtimeTables } from './tables.js';

export const REALTIME_PATH = '/api/v1/realtime';

export interface RealtimeRouteDeps {
  /** Refuses an upgrade (no key, an origin not allowed, too many connections from the IP). */
  admit(req: FastifyRequest): Promise<void>;
  /** Takes an upgraded connection. */
  accept(socket: WebSocket, req: FastifyRequest): void;
  tables: RealtimeTables;
  /** `POST /api/v1/realtime/broadcast`: the caller resolved from its key and token, then sent (channels.ts). */
  broadcast(req: FastifyRequest, body: BroadcastBody): Promise<number>;
  /** Secret key or a console admin session whose role may make changes (admin's `guards.manage`: a viewer lists only). */
  manage(req: FastifyRequest): Promise<void>;
  maxMessageBytes: number;
}

const TableParams = {
  type: 'object',
  properties: { table: { type: 'string', minLength: 1, maxLength: 63 } },
  required: ['table'],
} as const;

export interface BroadcastBody {
  channel: string;
  event: string;
  payload: unknown;
  private?: boolean;
}

const Broadcast = {
  type: 'object',
  properties: {
    channel: { type: 'string', minLength: 1, maxLength: 255 },
    event: { type: 'string', minLength: 1, maxLength: 255 },
    payload: {},
    private: { type: 'boolean' },
  },
  required: ['channel', 'event', 'payload'],
  additionalProperties: false,
} as const;

const TableEntry = {
  type: 'object',
  properties: { table: { type: 'string' }, enabled: { type: 'boolean' } },
  required: ['table', 'enabled'],
} as const;

/**
 * Mounts `GET /api/v1/realtime` (WebSocket), `POST /api/v1/realtime/broadcast` and
 * `GET|PUT|DELETE /api/v1/realtime/tables[/{table}]`.
 * @example await registerRealtimeRoutes(app, { admit, accept, tables, manage: admin.guards.manage, maxMessageBytes: 65536 });
 */
export async function registerRealtimeRoutes(app: App, d: RealtimeRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    // No compression: a change is small, and deflating it for each of a thousand subscribers
    // would cost more CPU than the bytes it saves.
    await scope.register(websocket, {
      options: { maxPayload: d.maxMessageBytes, perMessageDeflate: false },
      // A client's broken frame or an oversized message: ws closes the socket itself (1002, 1009);
      // the client's doing, not the server's error.
      errorHandler: (err, socket, req) => {
        req.log.debug({ err }, 'realtime: a client connection failed');
        socket.terminate();
      },
    });
    scope.route({
      method: 'GET',
      url: REALTIME_PATH,
      preValidation: d.admit,
      handler: async (_req: FastifyRequest, reply: FastifyReply) => {
        reply.code(426).header('upgrade', 'websocket');
        return {
          code: 'invalid_request',
          message: 'Connect with a WebSocket (Upgrade: websocket), e.g. new WebSocket(url + "?apikey=pk_…").',
        };
      },
      wsHandler: (socket: WebSocket, req: FastifyRequest) => d.accept(socket, req),
    });
  });

  app.post(
    `${REALTIME_PATH}/broadcast`,
    {
      bodyLimit: d.maxMessageBytes,
      schema: {
        summary: 'Send a message to the members of a channel',
        body: Broadcast,
        response: { 202: { type: 'object', properties: { recipients: { type: 'integer' } }, required: ['recipients'] } },
      },
    },
    async (req, reply) => {
      const recipients = await d.broadcast(req, req.body as BroadcastBody);
      reply.code(202);
      return { recipients };
    },
  );

  const manage = { onRequest: d.manage };
  // Switching capture is an admin action: the audit log records who did it (admin/audit.ts).
  const audit = (action: string) => ({ config: { audit: action } });
  app.get(
    `${REALTIME_PATH}/tables`,
    {
      ...manage,
      schema: {
        summary: 'Tables of public and whether their changes are pushed',
        response: { 200: { type: 'array', items: TableEntry } },
      },
    },
    async () => d.tables.list(),
  );
  app.put(
    `${REALTIME_PATH}/tables/:table`,
    {
      ...manage,
      ...audit('realtime.table.enable'),
      schema: {
        summary: "Capture a table's changes (realtime.enable)",
        params: TableParams,
        response: { 200: TableEntry },
      },
    },
    async (req) => d.tables.enable((req.params as { table: string }).table),
  );
  app.delete(
    `${REALTIME_PATH}/tables/:table`,
    {
      ...manage,
      ...audit('realtime.table.disable'),
      schema: {
        summary: "Stop capturing a table's changes (realtime.disable)",
        params: TableParams,
        response: { 200: TableEntry },
      },
    },
    async (req) => d.tables.disable((req.params as { table: string }).table),
  );
}
