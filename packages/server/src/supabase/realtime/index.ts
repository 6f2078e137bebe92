/**
 * Supabase Realtime's face (docs/supabase.md, "Realtime channels"): `GET /realtime/v1/websocket`
 * speaking the Phoenix channels protocol as `@supabase/realtime-js` does (vsn 1.0.0 JSON objects,
 * vsn 2.0.0 JSON arrays and its binary user-broadcast frames): heartbeats, `phx_join`/`phx_leave`,
 * `broadcast` (with `self` and `ack`) and `presence` (track/untrack, `presence_state`,
 * `presence_diff`) between the members of a topic on this instance.
 * The limits are realtime's (config.realtime): message bytes, channels per connection,
 * connections per client address, the buffered bytes a slow client may hold.
 */
import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { RealtimeConfig } from '../../config/index.js';
import { ApiError, type App, type Principal, type PrincipalResolver } from '../../http/index.js';

export interface SupabaseRealtimeDeps {
  resolvePrincipal: PrincipalResolver;
  config: RealtimeConfig;
  isOriginAllowed(origin: string): boolean;
}

export const SUPABASE_REALTIME_PATH = '/realtime/v1/websocket';

interface Frame {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

interface Member {
  client: Client;
  topic: string;
  joinRef: string | null;
  self: boolean;
  ack: boolean;
  presenceKey: string;
  /** This member's tracked presence meta (null: not tracked). */
  meta: Record<string, unknown> | null;
}

/** Members per topic on this instance. */
class Topics {
  private readonly byTopic = new Map<string, Set<Member>>();
  add(m: Member): void {
    let set = this.byTopic.get(m.topic);
    if (!set) this.byTopic.set(m.topic, (set = new Set()));
    set.add(m);
  }
  remove(m: Member): void {
    const set = this.byTopic.get(m.topic);
    if (!set) return;
    set.delete(m);
    if (set.size === 0) this.byTopic.delete(m.topic);
  }
  members(topic: string): Iterable<Member> {
    return this.byTopic.get(topic) ?? [];
  }
}

const presenceOf = (m: Member) => ({ [m.presenceKey]: { metas: [m.meta] } });

class Client {
  readonly channels = new Map<string, Member>();
  constructor(
    readonly socket: WebSocket,
    readonly vsn: 1 | 2,
    public principal: Principal,
    private readonly topics: Topics,
    private readonly d: SupabaseRealtimeDeps,
  ) {}

  send(f: Frame): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount > this.d.config.maxBufferedBytes) {
      // Too slow to take its messages: dropped as Plinth's own socket drops one.
      this.socket.close(4008, 'too slow');
      return;
    }
    const text = this.vsn === 2 ? JSON.stringify([f.join_ref, f.ref, f.topic, f.event, f.payload]) : JSON.stringify(f);
    this.socket.send(text);
  }

  reply(f: Frame, status: 'ok' | 'error', response: Record<string, unknown>): void {
    this.send({ join_ref: f.join_ref, ref: f.ref, topic: f.topic, event: 'phx_reply', payload: { status, response } });
  }

  async handle(f: Frame): Promise<void> {
    if (f.topic === 'phoenix' && f.event === 'heartbeat') return this.reply(f, 'ok', {});
    switch (f.event) {
      case 'phx_join':
        return this.join(f);
      case 'phx_leave': {
        const m = this.channels.get(f.topic);
        if (m) this.leave(m);
        return this.reply(f, 'ok', {});
      }
      case 'access_token': {
        const token = f.payload.access_token;
        if (typeof token === 'string' && token.length > 0) {
          try {
            this.principal = await this.d.resolvePrincipal(undefined, `Bearer ${token}`);
          } catch (err) {
            this.send({ join_ref: f.join_ref, ref: null, topic: f.topic, event: 'system', payload: systemError(err) });
          }
        }
        return;
      }
      case 'broadcast':
        return this.broadcast(f);
      case 'presence':
        return this.presence(f);
      default: {
        if (!this.channels.has(f.topic)) return this.reply(f, 'error', { reason: 'unmatched topic' });
        return this.reply(f, 'ok', {});
      }
    }
  }

  private async join(f: Frame): Promise<void> {
    if (!f.topic.startsWith('realtime:')) return this.reply(f, 'error', { reason: 'Topics must start with "realtime:".' });
    const config = (f.payload.config ?? {}) as {
      broadcast?: { self?: boolean; ack?: boolean };
      presence?: { key?: string };
      postgres_changes?: unknown[];
      private?: boolean;
    };
    const token = f.payload.access_token;
    if (typeof token === 'string' && token.length > 0) {
      try {
        this.principal = await this.d.resolvePrincipal(undefined, `Bearer ${token}`);
      } catch (err) {
        return this.reply(f, 'error', { reason: err instanceof Error ? err.message : 'invalid token' });
      }
    }
    const existing = this.channels.get(f.topic);
    if (existing) this.leave(existing);
    if (this.channels.size >= this.d.config.maxSubscriptions) {
      return this.reply(f, 'error', { reason: `At most ${this.d.config.maxSubscriptions} channels per connection.` });
    }
    if (config.private === true && this.principal.role !== 'service') {
      // Private channels are decided by policies on realtime.messages: not checked by this face yet,
      // so refused to all but the secret key (never opened to a caller a policy would refuse).
      return this.reply(f, 'error', { reason: 'Unauthorized: You do not have permissions to read from this Channel topic' });
    }
    if (Array.isArray(config.postgres_changes) && config.postgres_changes.length > 0) {
      return this.reply(f, 'error', { reason: 'postgres_changes are not served by this face yet: use /api/v1/realtime.' });
    }
    const key = typeof config.presence?.key === 'string' && config.presence.key !== '' ? config.presence.key : randomUUID();
    const m: Member = {
      client: this,
      topic: f.topic,
      joinRef: f.join_ref ?? f.ref,
      self: config.broadcast?.self === true,
      ack: config.broadcast?.ack === true,
      presenceKey: key,
      meta: null,
    };
    this.channels.set(f.topic, m);
    this.topics.add(m);
    this.reply(f, 'ok', { postgres_changes: [] });
    // The presence state of the topic, as Supabase sends it after a join.
    const state: Record<string, { metas: unknown[] }> = {};
    for (const other of this.topics.members(f.topic)) {
      if (other.meta) (state[other.presenceKey] ??= { metas: [] }).metas.push(other.meta);
    }
    this.send({ join_ref: m.joinRef, ref: null, topic: f.topic, event: 'presence_state', payload: state });
  }

  leave(m: Member): void {
    this.channels.delete(m.topic);
    this.topics.remove(m);
    if (m.meta) this.diff(m.topic, {}, presenceOf(m));
    m.meta = null;
  }

  private broadcast(f: Frame): void {
    const m = this.channels.get(f.topic);
    if (!m) {
      this.reply(f, 'error', { reason: 'Join the channel before sending on it.' });
      return;
    }
    const payload = { type: 'broadcast', event: f.payload.event, payload: f.payload.payload };
    for (const other of this.topics.members(f.topic)) {
      if (other === m && !m.self) continue;
      other.client.send({ join_ref: other.joinRef, ref: null, topic: f.topic, event: 'broadcast', payload });
    }
    if (m.ack && f.ref !== null) this.reply(f, 'ok', {});
  }

  private presence(f: Frame): void {
    const m = this.channels.get(f.topic);
    if (!m) {
      this.reply(f, 'error', { reason: 'Join the channel before tracking presence.' });
      return;
    }
    if (f.payload.event === 'track') {
      const before = m.meta;
      const fields = (f.payload.payload ?? {}) as Record<string, unknown>;
      m.meta = { ...fields, phx_ref: randomUUID().replace(/-/g, '').slice(0, 20) };
      this.diff(m.topic, presenceOf(m), before ? { [m.presenceKey]: { metas: [before] } } : {});
    } else if (f.payload.event === 'untrack') {
      if (m.meta) this.diff(m.topic, {}, presenceOf(m));
      m.meta = null;
    }
    this.reply(f, 'ok', {});
  }

  private diff(topic: string, joins: Record<string, unknown>, leaves: Record<string, unknown>): void {
    for (const other of this.topics.members(topic)) {
      other.client.send({ join_ref: other.joinRef, ref: null, topic, event: 'presence_diff', payload: { joins, leaves } });
    }
  }

  close(): void {
    for (const m of [...this.channels.values()]) this.leave(m);
  }
}

function systemError(err: unknown) {
  return { status: 'error', extension: 'system', message: err instanceof Error ? err.message : 'error' };
}

/** vsn 2's binary user-broadcast push (kind 3): realtime-js sends `broadcast` this way. */
function decodeBinary(buf: Buffer): Frame | null {
  if (buf.length < 7 || buf[0] !== 3) return null;
  const [joinLen, refLen, topicLen, eventLen, metaLen, encoding] = [buf[1], buf[2], buf[3], buf[4], buf[5], buf[6]];
  let o = 7;
  const take = (n: number) => {
    const s = buf.subarray(o, o + n).toString('utf8');
    o += n;
    return s;
  };
  const join_ref = take(joinLen) || null;
  const ref = take(refLen) || null;
  const topic = take(topicLen);
  const event = take(eventLen);
  take(metaLen);
  if (o > buf.length) return null;
  const rest = buf.subarray(o);
  const payload = encoding === 1 ? JSON.parse(rest.toString('utf8')) : rest.toString('base64');
  return { join_ref, ref, topic, event: 'broadcast', payload: { type: 'broadcast', event, payload } };
}

function decode(data: Buffer, isBinary: boolean, vsn: 1 | 2): Frame | null {
  if (isBinary) return vsn === 2 ? decodeBinary(data) : null;
  const v = JSON.parse(data.toString('utf8')) as unknown;
  let f: Partial<Frame>;
  if (Array.isArray(v)) {
    const [join_ref, ref, topic, event, payload] = v as [string | null, string | null, string, string, Record<string, unknown>];
    f = { join_ref, ref, topic, event, payload };
  } else if (v && typeof v === 'object') f = v as Partial<Frame>;
  else return null;
  if (typeof f.topic !== 'string' || typeof f.event !== 'string') return null;
  return {
    join_ref: typeof f.join_ref === 'string' ? f.join_ref : null,
    ref: typeof f.ref === 'string' ? f.ref : null,
    topic: f.topic,
    event: f.event,
    payload: f.payload && typeof f.payload === 'object' ? f.payload : {},
  };
}

/**
 * Mounts `GET /realtime/v1/websocket`.
 * @example await registerSupabaseRealtime(app, { resolvePrincipal, config: config.realtime, isOriginAllowed: settings.isOriginAllowed });
 */
export async function registerSupabaseRealtime(app: App, d: SupabaseRealtimeDeps): Promise<{ connections(): number; close(): void }> {
  const topics = new Topics();
  const clients = new Set<Client>();
  const perIp = new Map<string, number>();
  await app.register(async (scope) => {
    await scope.register(websocket, {
      options: { maxPayload: d.config.maxMessageBytes, perMessageDeflate: false },
      errorHandler: (err, socket, req) => {
        req.log.debug({ err }, 'supabase realtime: a client connection failed');
        socket.terminate();
      },
    });
    scope.route({
      method: 'GET',
      url: SUPABASE_REALTIME_PATH,
      preValidation: async (req: FastifyRequest) => {
        const origin = req.headers.origin;
        if (origin !== undefined && !d.isOriginAllowed(origin)) {
          throw new ApiError('forbidden', `The origin ${origin.slice(0, 200)} may not connect: add it to the cors_origins auth setting.`);
        }
        const q = req.query as Record<string, unknown>;
        const apikey = typeof q.apikey === 'string' ? q.apikey : req.headers.apikey;
        req.principal = await d.resolvePrincipal(apikey, req.headers.authorization);
        if ((perIp.get(req.ip) ?? 0) >= d.config.maxConnectionsPerIp) {
          throw new ApiError('too_many_connections', `At most ${d.config.maxConnectionsPerIp} realtime connections per client address.`);
        }
      },
      handler: async (_req: FastifyRequest, reply: FastifyReply) => {
        reply.code(426).header('upgrade', 'websocket');
        return { code: 'invalid_request', message: 'Connect with a WebSocket (Upgrade: websocket).' };
      },
      wsHandler: (socket: WebSocket, req: FastifyRequest) => {
        const ip = req.ip;
        perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
        const vsn = (req.query as Record<string, unknown>).vsn === '2.0.0' ? 2 : 1;
        const principal = req.principal ?? { role: 'anon' as const, claims: '{"role":"anon"}', uid: null };
        const client = new Client(socket, vsn, principal, topics, d);
        clients.add(client);
        let queue = Promise.resolve();
        socket.on('message', (data: Buffer, isBinary: boolean) => {
          let f: Frame | null;
          try {
            f = decode(data, isBinary, vsn);
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
          const n = (perIp.get(ip) ?? 1) - 1;
          if (n <= 0) perIp.delete(ip);
          else perIp.set(ip, n);
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
