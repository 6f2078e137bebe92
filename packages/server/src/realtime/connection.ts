/**
 * One client's WebSocket on Plinth's own protocol (docs/realtime.md): a Session (session.ts: its
 * principal, subscriptions, token expiry and limits) whose messages are JSON text frames handled
 * one at a time in the order sent; a client too slow to take what it is sent is dropped rather
 * than buffered without bound (it resumes with `since`).
 *
 * What a client sends is bounded here too: messages waiting to be handled (socket paused past
 * MAX_WAITING_MESSAGES / MAX_WAITING_BYTES).
 */
import type { RawData, WebSocket } from 'ws';
import { ApiError, type Principal } from '../http/index.js';
import { randomUUID } from 'node:crypto';
import type { ChannelMember, ChannelMessage } from './channels.js';
import { type SharedFrame, textFrame, writeFrame } from './frames.js';
import { type ClientMessage, errorMessage, messageId, parseClientMessage } from './protocol.js';
import { CLOSE_TOO_SLOW, Session, type SessionDeps } from './session.js';

export { CLOSE_SESSION_ENDED, CLOSE_TOO_SLOW, SUBSCRIBE_BURST, SUBSCRIBE_PER_SECOND } from './session.js';
/** What a connection needs: a session's (session.ts). */
export type ConnectionDeps = SessionDeps;

/**
 * Messages received and not yet handled, at most (count, and their bytes). Past either, the
 * socket stops being read until half of them are handled. Pausing, not closing (1008): a client
 * that resubscribes everything at once after a reconnect (the SDK sends up to
 * REALTIME_MAX_SUBSCRIPTIONS messages in one burst) is slowed, not punished; TCP carries the
 * back-pressure to the sender, so what the server holds for one connection is these bounds plus
 * the kernel's socket buffers, however fast it sends (review round 3, R5).
 */
export const MAX_WAITING_MESSAGES = 16;
export const MAX_WAITING_BYTES = 64 * 1024;

function rawBytes(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
}

export class Connection extends Session {
  /** Messages received and not handled yet, and their bytes (R5). */
  private waiting = 0;
  private waitingBytes = 0;
  private readPaused = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly socket: WebSocket,
    apikey: string | undefined,
    start: Principal,
    d: ConnectionDeps,
    /** The access token of an `Authorization` header at connect (clients that can set headers). */
    token: string | null = null,
    /** The client's address (per-IP limits: subscriptions, replays). */
    ip = '',
  ) {
    super(apikey, start, d, token, ip);
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        this.report(new ApiError('invalid_request', 'Send messages as text frames of JSON.'));
        return;
      }
      const text = data.toString();
      const bytes = rawBytes(data);
      this.waiting++;
      this.waitingBytes += bytes;
      if (!this.readPaused && (this.waiting >= MAX_WAITING_MESSAGES || this.waitingBytes >= MAX_WAITING_BYTES)) {
        this.readPaused = true;
        socket.pause();
      }
      // In the order sent: `auth` then `subscribe` need no wait between them.
      this.queue = this.queue
        .then(() => this.handle(text))
        .catch(() => undefined)
        .then(() => {
          this.waiting--;
          this.waitingBytes -= bytes;
          if (this.readPaused && this.waiting <= MAX_WAITING_MESSAGES / 2 && this.waitingBytes <= MAX_WAITING_BYTES / 2) {
            this.readPaused = false;
            if (!this.closed) socket.resume();
          }
        });
    });
  }

  send(text: string | Buffer): boolean {
    if (!this.room(text.length)) return false;
    // A Buffer is UTF-8 text encoded once for many subscribers: sent as a text frame.
    if (typeof text === 'string') this.socket.send(text);
    else this.socket.send(text, { binary: false });
    return true;
  }

  /** A channel message framed once for all its members (frames.ts). */
  sendFrame(f: SharedFrame): boolean {
    if (!this.room(f.frame.length)) return false;
    writeFrame(this.socket, f);
    return true;
  }

  /** The socket is open and may take `bytes` more; a client too slow to take what it has is dropped. */
  private room(bytes: number): boolean {
    const s = this.socket;
    if (this.closed || s.readyState !== s.OPEN) return false;
    if (s.bufferedAmount + bytes > this.d.maxBufferedBytes) {
      // Never buffered without bound: the client reconnects and resumes from its last seq.
      this.d.logger.info({ buffered: s.bufferedAmount }, 'realtime: a client too slow to take its changes was dropped');
      this.d.onDropped();
      this.close(CLOSE_TOO_SLOW, 'too slow');
      s.terminate();
      return false;
    }
    return true;
  }

  async flushed(): Promise<void> {
    const low = this.d.maxBufferedBytes / 4;
    while (!this.closed && this.socket.bufferedAmount > low) await new Promise((r) => setTimeout(r, 10));
  }

  /** The membership of a channel this connection joined, or `invalid_parameter`. */
  private member(channel: string): ChannelMember {
    const m = this.channel(channel);
    if (!m)
      throw new ApiError('invalid_parameter', `Join the channel "${channel.slice(0, 100)}" first.`, {
        field: 'channel',
        channel: channel.slice(0, 255),
      });
    return m;
  }

  /** The membership of a channel this connection joined and may send on, or `forbidden`. */
  private writable(channel: string): ChannelMember {
    const m = this.member(channel);
    if (m.write === false)
      throw new ApiError(
        'forbidden',
        `You may not send on the private channel ${channel}: no policy on realtime.messages lets you insert.`,
      );
    return m;
  }

  /** Put out of a private channel by a new token's policies: an error naming it, then `left`. */
  protected channelLost(m: ChannelMember, err: ApiError): void {
    const body = JSON.parse(errorMessage(err)) as Record<string, unknown>;
    this.send(JSON.stringify({ type: 'error', channel: m.topic, ...Object.fromEntries(Object.entries(body).slice(1)) }));
    this.send(JSON.stringify({ type: 'left', channel: m.topic }));
  }

  protected report(err: ApiError, id?: string): void {
    this.send(errorMessage(err, id));
  }

  protected shut(code: number, reason: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason);
  }

  private async handle(text: string): Promise<void> {
    if (this.closed) return;
    let msg: ClientMessage | undefined;
    try {
      msg = parseClientMessage(text);
      switch (msg.type) {
        case 'auth':
          return await this.auth(msg.accessToken);
        case 'subscribe':
          await this.subscribe(msg);
          return;
        case 'unsubscribe':
          this.unsubscribe(msg.id);
          this.send(`{"type":"unsubscribed","id":${JSON.stringify(msg.id)}}`);
          return;
        case 'ping':
          this.send('{"type":"pong"}');
          return;
        case 'join': {
          const channel = msg.channel;
          // A private channel: the caller's policies on realtime.messages decide at the join (and
          // again at each new token, session.ts): reading is joining, inserting is sending.
          const rights = msg.private ? await this.d.channels.rights(this.principal, channel) : { read: true, write: true };
          if (!rights.read)
            throw new ApiError(
              'forbidden',
              `You may not join the private channel ${channel}: no policy on realtime.messages lets you read it.`,
            );
          if (this.closed) return;
          const member: ChannelMember = {
            topic: channel,
            private: msg.private,
            write: rights.write,
            ip: this.ip,
            presenceKey: msg.presenceKey ?? randomUUID(),
            self: msg.self,
            meta: null,
            deliver: (message: ChannelMessage) => this.sendFrame(channelFrame(channel, message)),
          };
          const presence = this.joinChannel(member);
          this.send(
            JSON.stringify({
              type: 'joined',
              channel,
              presence_key: member.presenceKey,
              presence,
              ...(msg.private ? { private: true, write: rights.write } : {}),
            }),
          );
          return;
        }
        case 'leave':
          this.leaveChannel(msg.channel);
          this.send(JSON.stringify({ type: 'left', channel: msg.channel }));
          return;
        case 'broadcast': {
          const member = this.writable(msg.channel);
          this.takeBroadcastToken();
          this.d.channels.broadcast(msg.channel, member, msg.event, msg.payload);
          return;
        }
        case 'track': {
          const member = this.writable(msg.channel);
          this.takeBroadcastToken();
          this.d.channels.track(member, msg.meta);
          return;
        }
        case 'untrack': {
          const member = this.writable(msg.channel);
          this.takeBroadcastToken();
          this.d.channels.untrack(member);
          return;
        }
      }
    } catch (err) {
      const id = msg && 'id' in msg ? msg.id : msg && 'channel' in msg ? undefined : messageIdOf(text);
      if (err instanceof ApiError && msg && 'channel' in msg) {
        // A channel's error names the channel (a client may have several joins under way).
        const body = JSON.parse(errorMessage(err)) as Record<string, unknown>;
        this.send(JSON.stringify({ type: 'error', channel: msg.channel, ...Object.fromEntries(Object.entries(body).slice(1)) }));
      } else if (err instanceof ApiError) this.report(err, id);
      else {
        const dbDown = (err as Error)?.name === 'DbUnavailableError';
        if (!dbDown) this.d.logger.error({ err }, 'realtime: a message failed');
        this.report(
          dbDown
            ? new ApiError('database_unavailable', 'The database is unavailable; try again shortly.')
            : new ApiError('internal_error', 'Something went wrong on our side.'),
          id,
        );
      }
    }
  }
}

/**
 * Each channel message encoded and framed once for all the members it goes to, not once per
 * member (the hub hands every member of a topic the same message object, and they all share its
 * channel name; frames.ts). bench/channels.mjs measures a broadcast to 1,000 members.
 */
const encoded = new WeakMap<ChannelMessage, SharedFrame>();

/** A channel's message on this protocol: `broadcast` or `presence` (joins and leaves), framed. */
function channelFrame(channel: string, m: ChannelMessage): SharedFrame {
  const done = encoded.get(m);
  if (done) return done;
  let text: string;
  if (m.kind === 'broadcast') {
    // Bytes (a binary broadcast of Supabase's protocol) travel as base64 text on this JSON wire.
    const payload = Buffer.isBuffer(m.payload) ? m.payload.toString('base64') : m.payload;
    text = JSON.stringify({ type: 'broadcast', channel, event: m.event, payload });
  } else text = JSON.stringify({ type: 'presence', channel, joins: m.joins, leaves: m.leaves });
  const framed = textFrame(Buffer.from(text));
  encoded.set(m, framed);
  return framed;
}

function messageIdOf(text: string): string | undefined {
  try {
    return messageId(JSON.parse(text));
  } catch {
    return undefined;
  }
}
