/**
 * Supabase Realtime's face (docs/supabase.md, "Realtime channels"): `GET /realtime/v1/websocket`
 * speaking the Phoenix channels protocol as `@supabase/realtime-js` does (phoenix.ts):
 * heartbeats, `phx_join`/`phx_leave`, `access_token`, `postgres_changes` served by realtime's hub
 * (changes.ts: each client is a realtime Session, so the same capture, per-event RLS, filter
 * evaluator, token and session rules as /api/v1/realtime), `broadcast` (with `self` and `ack`)
 * and `presence` (track/untrack, `presence_state`, `presence_diff`) between the members of a
 * topic on this instance.
 * The limits are realtime's (config.realtime): message bytes, channels per connection,
 * connections per client address (counted with /api/v1/realtime's), the buffered bytes a slow
 * client may hold.
 */
import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { RealtimeConfig } from '../../config/index.js';
import { ApiError, type App, type Principal, type PrincipalResolver } from '../../http/index.js';
import {
  CLOSE_TOO_SLOW,
  type ChannelMember,
  type ChannelMessage,
  type PresenceState,
  type Realtime,
  type ServerBroadcast,
  Session,
  type SharedFrame,
  textFrame,
  writeFrame,
} from '../../realtime/index.js';
import { planBindings, supabaseFormat } from './changes.js';
import { decodeFrame, encodeFrame, encodeUserBroadcast, type Frame, type Vsn } from './phoenix.js';

export interface SupabaseRealtimeDeps {
  realtime: Realtime;
  resolvePrincipal: PrincipalResolver;
  config: RealtimeConfig;
  isOriginAllowed(origin: string): boolean;
}

export const SUPABASE_REALTIME_PATH = '/realtime/v1/websocket';
/** Supabase Realtime's REST broadcast (realtime-js's send() on a channel not joined; httpSend()). */
export const SUPABASE_BROADCAST_PATH = '/realtime/v1/api/broadcast';
/** Messages in one broadcast request, at most. */
const MAX_BROADCASTS = 100;

const badBroadcast = (message: string, field: string) => new ApiError('invalid_parameter', message, { field });

/** `{messages: [{topic, event, payload, private?}]}` as realtime-js sends it, checked. */
function broadcastsOf(body: unknown): ServerBroadcast[] {
  const list = (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BROADCASTS) {
    throw badBroadcast(`Send {"messages": [{"topic", "event", "payload"}, …]} with 1 to ${MAX_BROADCASTS} messages.`, 'messages');
  }
  return list.map((raw, i) => {
    const m = (raw ?? {}) as Record<string, unknown>;
    const name = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 255;
    if (!name(m.topic)) throw badBroadcast(`messages[${i}].topic must be the channel's name (1 to 255 characters).`, 'topic');
    if (!name(m.event)) throw badBroadcast(`messages[${i}].event must be a name of 1 to 255 characters.`, 'event');
    if (!('payload' in m)) throw badBroadcast(`messages[${i}].payload is missing.`, 'payload');
    if (m.private !== undefined && typeof m.private !== 'boolean')
      throw badBroadcast(`messages[${i}].private must be a boolean.`, 'private');
    return { channel: m.topic as string, event: m.event as string, payload: m.payload, private: m.private === true };
  });
}

/** A channel joined through this face: realtime's member, with what Phoenix adds. */
interface Member extends ChannelMember {
  /** The Phoenix topic (`realtime:<topic>`). */
  readonly phxTopic: string;
  readonly joinRef: string | null;
  /** The hub subscriptions of its postgres_changes bindings (their ids). */
  readonly changes: string[];
  readonly ack: boolean;
  /** May send (broadcast, presence): a public channel's member always; a private one's as its policies say. */
  write: boolean;
}

const PREFIX = 'realtime:';

/**
 * A channel message's Phoenix payload, encoded once for all the members it goes to (each frame
 * differs only by its member's join_ref): see realtime/connection.ts's channelFrame.
 */
const payloads = new WeakMap<ChannelMessage, string>();
function payloadJson(m: ChannelMessage): string {
  let json = payloads.get(m);
  if (json === undefined) {
    json =
      m.kind === 'broadcast'
        ? JSON.stringify({
            type: 'broadcast',
            event: m.event,
            payload: Buffer.isBuffer(m.payload) ? m.payload.toString('base64') : m.payload,
          })
        : JSON.stringify({ joins: m.joins, leaves: m.leaves });
    payloads.set(m, json);
  }
  return json;
}

/**
 * A channel message's whole frame for a member, made once per (vsn, join_ref, topic) and written as
 * is to every member that shares them (realtime-js numbers its joins per socket, so most members
 * of a topic share one join_ref): realtime/frames.ts.
 */
const frames = new WeakMap<ChannelMessage, Map<string, SharedFrame>>();
function memberFrame(vsn: Vsn, joinRef: string | null, phxTopic: string, m: ChannelMessage): SharedFrame {
  let byMember = frames.get(m);
  if (!byMember) frames.set(m, (byMember = new Map()));
  const key = `${vsn}|${joinRef === null ? '' : `=${joinRef}`}|${phxTopic}`;
  let f = byMember.get(key);
  if (!f) {
    const event = { join_ref: joinRef, ref: null, topic: phxTopic, event: m.kind === 'broadcast' ? 'broadcast' : 'presence_diff' };
    f = textFrame(Buffer.from(encodeFrame(vsn, event, payloadJson(m))));
    byMember.set(key, f);
  }
  return f;
}

class Client extends Session {
  /** Joined channels by Phoenix topic (realtime's session holds the memberships). */
  private readonly members = new Map<string, Member>();
  /** postgres_changes ids of this connection, never 0 (realtime-js skips a falsy id). */
  private nextId = 1;
  constructor(
    readonly socket: WebSocket,
    readonly vsn: Vsn,
    apikey: string | undefined,
    principal: Principal,
    private readonly f: SupabaseRealtimeDeps,
    token: string | null,
    ip: string,
  ) {
    super(apikey, principal, f.realtime.faces.deps, token, ip);
  }

  /** Raw text on the socket, unless the client is too slow to take it (dropped as Plinth's own are). */
  send(text: string | Buffer, binary = false): boolean {
    const s = this.socket;
    if (this.closed || s.readyState !== s.OPEN) return false;
    if (s.bufferedAmount + text.length > this.f.config.maxBufferedBytes) {
      this.d.onDropped();
      this.close(CLOSE_TOO_SLOW, 'too slow');
      s.terminate();
      return false;
    }
    if (typeof text === 'string') s.send(text);
    else s.send(text, { binary });
    return true;
  }

  /** A channel message framed once for the members that share its frame (memberFrame). */
  sendFrame(f: SharedFrame): boolean {
    const s = this.socket;
    if (this.closed || s.readyState !== s.OPEN) return false;
    if (s.bufferedAmount + f.frame.length > this.f.config.maxBufferedBytes) {
      this.d.onDropped();
      this.close(CLOSE_TOO_SLOW, 'too slow');
      s.terminate();
      return false;
    }
    writeFrame(s, f);
    return true;
  }

  async flushed(): Promise<void> {
    const low = this.f.config.maxBufferedBytes / 4;
    while (!this.closed && this.socket.bufferedAmount > low) await new Promise((r) => setTimeout(r, 10));
  }

  /** An error of the change feed, as Supabase's `system` message on the channel(s) concerned. */
  protected report(err: ApiError, id?: string): void {
    for (const m of this.members.values()) {
      if (id !== undefined && !m.changes.includes(id)) continue;
      this.frame({
        join_ref: m.joinRef,
        ref: null,
        topic: m.phxTopic,
        event: 'system',
        payload: {
          status: 'error',
          extension: id === undefined ? 'system' : 'postgres_changes',
          channel: m.topic,
          message: err.message,
          code: err.code,
        },
      });
    }
  }

  protected shut(code: number, reason: string): void {
    this.members.clear();
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason);
  }

  frame(f: Frame): void {
    this.send(encodeFrame(this.vsn, f, JSON.stringify(f.payload)));
  }

  reply(f: Frame, status: 'ok' | 'error', response: Record<string, unknown>): void {
    this.frame({ join_ref: f.join_ref, ref: f.ref, topic: f.topic, event: 'phx_reply', payload: { status, response } });
  }

  async handle(f: Frame): Promise<void> {
    if (f.topic === 'phoenix' && f.event === 'heartbeat') return this.reply(f, 'ok', {});
    switch (f.event) {
      case 'phx_join':
        return this.join(f);
      case 'phx_leave': {
        this.leave(f.topic);
        return this.reply(f, 'ok', {});
      }
      case 'access_token': {
        const token = f.payload.access_token;
        if (typeof token === 'string' && token.length > 0) {
          try {
            await this.auth(token);
          } catch (err) {
            this.frame({ join_ref: f.join_ref, ref: null, topic: f.topic, event: 'system', payload: systemError(err) });
          }
        }
        return;
      }
      case 'broadcast':
        return this.broadcast(f);
      case 'presence':
        return this.presence(f);
      default: {
        if (!this.members.has(f.topic)) return this.reply(f, 'error', { reason: 'unmatched topic' });
        return this.reply(f, 'ok', {});
      }
    }
  }

  private async join(f: Frame): Promise<void> {
    if (!f.topic.startsWith(PREFIX)) return this.reply(f, 'error', { reason: 'Topics must start with "realtime:".' });
    const config = (f.payload.config ?? {}) as {
      broadcast?: { self?: boolean; ack?: boolean };
      presence?: { key?: string };
      postgres_changes?: unknown;
      private?: boolean;
    };
    this.leave(f.topic);
    const token = f.payload.access_token;
    try {
      // The token as an access_token event would set it (a new role checks the subscriptions again).
      if (typeof token === 'string' && token.length > 0) await this.auth(token);
    } catch (err) {
      return this.reply(f, 'error', { reason: err instanceof Error ? err.message : 'invalid token' });
    }
    const topic = f.topic.slice(PREFIX.length);
    const priv = config.private === true;
    // A private channel: the caller's policies on realtime.messages decide, once, at the join (and
    // at a join again after a new token): reading is joining, inserting is sending.
    let rights = { read: true, write: true };
    if (priv) {
      try {
        rights = await this.d.channels.rights(this.principal, topic);
      } catch (err) {
        this.d.logger.error({ err }, 'supabase realtime: deciding a private channel failed');
        return this.reply(f, 'error', { reason: 'Unable to decide the rights on this private channel; retry.' });
      }
      if (!rights.read)
        return this.reply(f, 'error', { reason: `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}` });
    }
    const joinRef = f.join_ref ?? f.ref;
    const phxTopic = f.topic;
    const m: Member = {
      topic,
      private: priv,
      write: rights.write,
      phxTopic,
      ip: this.ip,
      joinRef,
      changes: [],
      self: config.broadcast?.self === true,
      ack: config.broadcast?.ack === true,
      presenceKey: typeof config.presence?.key === 'string' && config.presence.key !== '' ? config.presence.key : randomUUID(),
      meta: null,
      deliver: (message) => {
        if (message.kind === 'broadcast') {
          // Bytes (a binary push, an octet-stream httpSend): vsn 2 takes them as bytes; vsn 1's
          // JSON carries them as base64 text.
          if (Buffer.isBuffer(message.payload)) {
            const frame = this.vsn === 2 ? encodeUserBroadcast(phxTopic, message.event, message.payload) : null;
            if (frame) {
              this.send(frame, true);
              return;
            }
          }
        }
        this.sendFrame(memberFrame(this.vsn, joinRef, phxTopic, message));
      },
    };
    // The channel on realtime's hub, then each postgres_changes binding as one subscription of it,
    // checked as /api/v1/realtime checks a subscribe (table, capture on, the role's access, the filter).
    const answered: Array<Record<string, unknown>> = [];
    let state: PresenceState;
    try {
      state = this.joinChannel(m);
      for (const b of planBindings(config.postgres_changes)) {
        const id = this.nextId++;
        const sub = await this.subscribe({
          id: String(id),
          table: b.binding.table,
          events: b.events,
          filter: b.filter,
          since: null,
          format: supabaseFormat(this.vsn, phxTopic, joinRef, id),
        });
        if (!sub) throw new ApiError('invalid_request', 'The connection closed.');
        m.changes.push(sub.id);
        answered.push({ id, ...b.binding });
      }
    } catch (err) {
      for (const id of m.changes) this.unsubscribe(id);
      this.leaveChannel(m.topic);
      if (!(err instanceof ApiError)) this.d.logger.error({ err }, 'supabase realtime: a join failed');
      const reason = err instanceof ApiError ? err.message : 'Unable to subscribe to changes with given parameters.';
      return this.reply(f, 'error', { reason, ...(err instanceof ApiError ? { code: err.code } : {}) });
    }
    this.members.set(phxTopic, m);
    this.reply(f, 'ok', { postgres_changes: answered });
    if (answered.length > 0) {
      this.frame({
        join_ref: joinRef,
        ref: null,
        topic: phxTopic,
        event: 'system',
        payload: { channel: m.topic, extension: 'postgres_changes', message: 'Subscribed to PostgreSQL', status: 'ok' },
      });
    }
    // The presence state of the topic, as Supabase sends it after a join.
    this.frame({ join_ref: joinRef, ref: null, topic: phxTopic, event: 'presence_state', payload: state });
  }

  /**
   * A new token's policies no longer let the member read its private channel (session.ts left it):
   * as Supabase's server does, a `system` error on the channel, then `phx_close`; its
   * postgres_changes bindings end with it.
   */
  protected channelLost(lost: ChannelMember, err: ApiError): void {
    for (const [phxTopic, m] of this.members) {
      if (m !== lost) continue;
      this.members.delete(phxTopic);
      for (const id of m.changes) this.unsubscribe(id);
      const payload = { status: 'error', extension: 'system', channel: m.topic, message: err.message, code: err.code };
      this.frame({ join_ref: m.joinRef, ref: null, topic: phxTopic, event: 'system', payload });
      this.frame({ join_ref: m.joinRef, ref: null, topic: phxTopic, event: 'phx_close', payload: {} });
    }
  }

  private leave(phxTopic: string): void {
    const m = this.members.get(phxTopic);
    if (!m) return;
    this.members.delete(phxTopic);
    for (const id of m.changes) this.unsubscribe(id);
    this.leaveChannel(m.topic);
  }

  /** A token of realtime's channel-message bucket, or the refusal replied (`rate_limited`). */
  private spend(f: Frame): boolean {
    try {
      this.takeBroadcastToken();
      return true;
    } catch (err) {
      const e = err as ApiError;
      this.reply(f, 'error', { reason: e.message, code: e.code, ...(e.details ? { details: e.details } : {}) });
      return false;
    }
  }

  private broadcast(f: Frame): void {
    const m = this.members.get(f.topic);
    if (!m) {
      this.reply(f, 'error', { reason: 'Join the channel before sending on it.' });
      return;
    }
    if (!m.write) {
      this.reply(f, 'error', { reason: `Unauthorized: You do not have permissions to write to this Channel topic: ${m.topic}` });
      return;
    }
    if (!this.spend(f)) return;
    const event = typeof f.payload.event === 'string' ? f.payload.event : '';
    this.d.channels.broadcast(m.topic, m, event, f.payload.payload);
    if (m.ack && f.ref !== null) this.reply(f, 'ok', {});
  }

  private presence(f: Frame): void {
    const m = this.members.get(f.topic);
    if (!m) {
      this.reply(f, 'error', { reason: 'Join the channel before tracking presence.' });
      return;
    }
    if (!m.write) {
      this.reply(f, 'error', { reason: `Unauthorized: You do not have permissions to write to this Channel topic: ${m.topic}` });
      return;
    }
    if (!this.spend(f)) return;
    if (f.payload.event === 'track') {
      const fields = f.payload.payload;
      this.d.channels.track(m, fields && typeof fields === 'object' && !Array.isArray(fields) ? (fields as Record<string, unknown>) : {});
    } else if (f.payload.event === 'untrack') this.d.channels.untrack(m);
    this.reply(f, 'ok', {});
  }
}

function systemError(err: unknown) {
  return {
    status: 'error',
    extension: 'system',
    message: err instanceof Error ? err.message : 'error',
    ...(err instanceof ApiError ? { code: err.code } : {}),
  };
}

/**
 * Mounts `GET /realtime/v1/websocket` and `POST /realtime/v1/api/broadcast` (also
 * `…/broadcast/{topic}/events/{event}`, realtime-js's httpSend).
 * @example await registerSupabaseRealtime(app, { realtime, resolvePrincipal, config: config.realtime, isOriginAllowed: settings.isOriginAllowed });
 */
export async function registerSupabaseRealtime(app: App, d: SupabaseRealtimeDeps): Promise<{ connections(): number; close(): void }> {
  const clients = new Set<Client>();
  const apikeyOf = (req: FastifyRequest): string | undefined => {
    const q = (req.query as Record<string, unknown>).apikey;
    if (typeof q === 'string') return q;
    return typeof req.headers.apikey === 'string' ? req.headers.apikey : undefined;
  };
  await app.register(async (scope) => {
    await scope.register(websocket, {
      options: { maxPayload: d.config.maxMessageBytes, perMessageDeflate: false },
      errorHandler: (err, socket, req) => {
        req.log.debug({ err }, 'supabase realtime: a client connection failed');
        socket.terminate();
      },
    });
    // Broadcast over HTTP onto realtime's channels, as Supabase Realtime answers it (202).
    scope.post(SUPABASE_BROADCAST_PATH, { bodyLimit: d.config.maxMessageBytes }, async (req, reply) => {
      const principal = await d.resolvePrincipal(apikeyOf(req), req.headers.authorization);
      await d.realtime.channels.send(principal, broadcastsOf(req.body));
      return reply.code(202).send();
    });
    // httpSend of bytes (application/octet-stream): the payload stays bytes.
    scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: d.config.maxMessageBytes }, (_req, body, done) =>
      done(null, body),
    );
    scope.post(`${SUPABASE_BROADCAST_PATH}/:topic/events/:event`, { bodyLimit: d.config.maxMessageBytes }, async (req, reply) => {
      const principal = await d.resolvePrincipal(apikeyOf(req), req.headers.authorization);
      const { topic, event } = req.params as { topic: string; event: string };
      const priv = (req.query as Record<string, unknown>).private === 'true';
      await d.realtime.channels.send(principal, broadcastsOf({ messages: [{ topic, event, payload: req.body ?? null, private: priv }] }));
      return reply.code(202).send();
    });
    scope.route({
      method: 'GET',
      url: SUPABASE_REALTIME_PATH,
      preValidation: async (req: FastifyRequest) => {
        const origin = req.headers.origin;
        if (origin !== undefined && !d.isOriginAllowed(origin)) {
          throw new ApiError('forbidden', `The origin ${origin.slice(0, 200)} may not connect: add it to the cors_origins auth setting.`);
        }
        req.principal = await d.resolvePrincipal(apikeyOf(req), req.headers.authorization);
        // One count per client address over /api/v1/realtime and this face.
        d.realtime.faces.admit(req.ip);
      },
      handler: async (_req: FastifyRequest, reply: FastifyReply) => {
        reply.code(426).header('upgrade', 'websocket');
        return { code: 'invalid_request', message: 'Connect with a WebSocket (Upgrade: websocket).' };
      },
      wsHandler: (socket: WebSocket, req: FastifyRequest) => {
        const ip = req.ip;
        const vsn = (req.query as Record<string, unknown>).vsn === '2.0.0' ? 2 : 1;
        const principal = req.principal ?? { role: 'anon' as const, claims: '{"role":"anon"}', uid: null };
        const bearer = /^bearer\s+(.+)$/i.exec(req.headers.authorization?.trim() ?? '')?.[1] ?? null;
        const client = new Client(socket, vsn, apikeyOf(req), principal, d, bearer, ip);
        clients.add(client);
        // Realtime's heartbeat: WebSocket pings, two missed drop the socket (and its presence).
        const detach = d.realtime.faces.attach(client, ip, socket);
        let queue = Promise.resolve();
        socket.on('message', (data: Buffer, isBinary: boolean) => {
          let f: Frame | null;
          try {
            f = decodeFrame(data, isBinary, vsn);
          } catch {
            f = null;
          }
          if (!f) {
            socket.close(1003, 'unreadable message');
            return;
          }
          const frame = f;
          // In order, as Phoenix handles one socket's messages.
          queue = queue.then(() => client.handle(frame)).catch((err) => req.log.debug({ err }, 'supabase realtime: a message failed'));
        });
        socket.on('error', () => undefined);
        socket.on('close', () => {
          client.close();
          clients.delete(client);
          detach();
        });
      },
    });
  });
  return {
    connections: () => clients.size,
    close() {
      for (const c of clients) c.socket.close(1001, 'server closing');
    },
  };
}
