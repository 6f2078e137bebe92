/**
 * One PostgreSQL connection that speaks the wire protocol itself, for `Db.runAs` only
 * (db/run-as.ts says why). It connects as postgres.js would to the same URL (the URL is
 * parsed by postgres.js: hosts, Unix socket, sslmode, startup parameters), authenticates
 * (trust, password, MD5, SCRAM-SHA-256), then takes request batches, several in flight
 * (pipelined), each answered in order up to its ReadyForQuery.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { Reply, Session } from './run-as.js';
import type { RoleContext, RunAsResult } from './types.js';
import * as wire from './wire.js';

const pbkdf2Async = promisify(pbkdf2);

/** Where and how to connect: postgres.js's reading of the URL. */
export interface WireTarget {
  hosts: Array<{ host: string; port: number }>;
  /** A Unix socket path, when the host is a directory. */
  path: string | null;
  user: string;
  password: string;
  ssl: false | true | string | tls.ConnectionOptions;
  /** Startup parameters: database, application_name, the URL's other query parameters. */
  params: Record<string, string>;
  keepAliveS: number;
}

/**
 * Reads a postgres:// URL the way postgres.js does, so both pools reach the same server as
 * the same user (postgres.js opens no connection to parse it).
 * @example wireTarget('postgres://app:pw@db:5432/app?sslmode=require', 'plinth-api')
 */
export function wireTarget(url: string, applicationName: string): WireTarget {
  const parsed = postgres(url, { max: 1, connection: { application_name: applicationName } });
  const o = parsed.options as unknown as {
    host: string[];
    port: number[];
    path: string | false;
    user: string;
    pass: string | null;
    database: string;
    ssl: WireTarget['ssl'];
    keep_alive: number | null;
    connection: Record<string, unknown>;
  };
  void parsed.end();
  const params: Record<string, string> = { user: o.user, database: o.database, client_encoding: 'UTF8' };
  for (const [k, v] of Object.entries(o.connection)) if (v !== undefined && v !== null && v !== '') params[k] = String(v);
  return {
    hosts: o.host.map((host, i) => ({ host, port: o.port[i] ?? o.port[0] ?? 5432 })),
    path: o.path || null,
    user: o.user,
    password: typeof o.pass === 'string' ? o.pass : '',
    ssl: o.ssl ?? false,
    params,
    keepAliveS: o.keep_alive ?? 60,
  };
}

/** A connection failure with a code `toDbError` knows (ECONNREFUSED, CONNECT_TIMEOUT, …). */
export function connectionError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

interface InFlight {
  reply: Reply;
  batch: ReturnType<Session['batch']>;
  resolve(r: RunAsResult): void;
  reject(err: unknown): void;
}

/** An open, authenticated connection taking runAs batches. */
export class WireConnection {
  private readonly reader = new wire.MessageReader();
  private readonly queue: InFlight[] = [];
  /** Why it closed; a FATAL the server sent outside a batch (shutdown) is kept to say so. */
  private closedBy: Error | null = null;
  private fatal: Error | null = null;
  readonly openedAt = Date.now();
  /** Set once it must take no new batch (lifetime over, an unexpected state); ends when idle. */
  retiring = false;
  onIdle: (() => void) | null = null;
  private drained: (() => void) | null = null;
  onClose: (() => void) | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly session: Session,
  ) {
    socket.on('data', (chunk: Buffer) => this.reader.push(chunk, (m) => this.onMessage(m)));
    socket.on('error', (err: Error & { code?: string }) => this.fail(connectionError(err.code ?? 'CONNECTION_CLOSED', err.message)));
    socket.on('close', () => this.fail(connectionError('CONNECTION_CLOSED', 'The connection to the database closed.')));
  }

  /** Batches sent and not yet answered. */
  get pending(): number {
    return this.queue.length;
  }

  get usable(): boolean {
    return !this.closedBy && !this.retiring;
  }

  /**
   * Sends one request's batch; resolves once its transaction ended.
   * @example await conn.runAs({ role: 'anon', claims: '{}' }, 'select …', [], true)
   */
  runAs(ctx: RoleContext, text: string, params: string[], rows: boolean): Promise<RunAsResult> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    const batch = this.session.batch(ctx, text, params, rows);
    return new Promise((resolve, reject) => {
      this.queue.push({ reply: new Reply(rows), batch, resolve, reject });
      this.socket.write(batch.bytes);
    });
  }

  private onMessage(m: wire.BackendMessage): void {
    const head = this.queue[0];
    if (!head) {
      // Outside a batch only a FATAL before the server closes (shutdown) means anything.
      if (m.type === wire.MSG.error) this.fatal ??= wire.errorOf(m.body);
      return;
    }
    if (!head.reply.take(m)) return;
    this.queue.shift();
    const { reply } = head;
    if (reply.error) {
      this.session.failed(head.batch, reply.error, reply.parses);
      head.reject(reply.error);
    } else {
      try {
        head.resolve(reply.result());
      } catch (err) {
        // Not idle after Sync: something opened a transaction block. Ending the connection
        // rolls it back; the request gets an error rather than a result of uncertain fate.
        head.reject(err);
        this.retiring = true;
        this.socket.destroy();
        return;
      }
    }
    if (!this.queue.length) {
      this.drained?.();
      this.onIdle?.();
    }
  }

  private fail(err: Error): void {
    if (this.closedBy) return;
    // A FATAL the server sent before closing (57P01 shutdown) says more than "closed".
    const reason = this.fatal ?? err;
    this.closedBy = reason;
    for (const p of this.queue.splice(0)) p.reject(p.reply.error ?? reason);
    this.socket.destroy();
    this.onClose?.();
  }

  /** Ends the connection (Terminate) once its batches are answered, or after `timeoutMs`. */
  async end(timeoutMs: number): Promise<void> {
    this.retiring = true;
    if (this.closedBy) return;
    let timer: NodeJS.Timeout | undefined;
    const within = (p: Promise<unknown>, ms: number) =>
      Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
    if (this.queue.length) await within(new Promise<void>((r) => (this.drained = r)), timeoutMs);
    if (this.closedBy) return;
    const closed = new Promise((r) => this.socket.once('close', r));
    this.socket.end(wire.TERMINATE);
    await within(closed, 1000);
    this.fail(connectionError('CONNECTION_ENDED', 'The connection was ended.'));
  }

  /**
   * Connects to the first host that answers, authenticates and waits for ReadyForQuery.
   * @example const conn = await WireConnection.open(wireTarget(url, 'plinth-api'), 1000)
   */
  static async open(target: WireTarget, timeoutMs: number): Promise<WireConnection> {
    const places = target.path ? [{ host: target.path, port: 0 }] : target.hosts;
    let last: unknown;
    for (const place of places) {
      try {
        return await openOne(target, place, timeoutMs);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  /** Builds a connection around a socket that is ready for queries (openOne). */
  static ready(socket: net.Socket, login: string): WireConnection {
    return new WireConnection(socket, new Session(login));
  }
}

/** One attempt on one host: socket, TLS when asked for, startup, authentication. */
function openOne(target: WireTarget, place: { host: string; port: number }, timeoutMs: number): Promise<WireConnection> {
  return new Promise((resolve, reject) => {
    let socket: net.Socket = target.path ? net.connect(target.path) : net.connect(place.port, place.host);
    let done = false;
    const finish = (err: unknown, conn?: WireConnection) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
      if (err || !conn) {
        socket.removeAllListeners('data');
        socket.on('error', () => undefined);
        socket.destroy();
        reject(err);
      } else resolve(conn);
    };
    const timer = setTimeout(
      () => finish(connectionError('CONNECT_TIMEOUT', `Connecting to the database took more than ${timeoutMs} ms.`)),
      timeoutMs,
    );
    const onError = (err: Error & { code?: string }) => finish(connectionError(err.code ?? 'CONNECTION_CLOSED', err.message));
    const onClose = () => finish(connectionError('CONNECTION_CLOSED', 'The database closed the connection while it was being opened.'));
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.setNoDelay(true);

    const handshake = new Handshake(target, (bytes) => socket.write(bytes));
    const reader = new wire.MessageReader();
    const listen = () =>
      socket.on('data', (chunk: Buffer) =>
        reader.push(chunk, (m) => {
          handshake.take(m).then(
            (login) => {
              if (login === null || done) return;
              socket.removeAllListeners('data');
              socket.setKeepAlive(true, target.keepAliveS * 1000);
              const conn = WireConnection.ready(socket, login);
              finish(null, conn);
            },
            (err) => finish(err),
          );
        }),
      );
    const begin = () => {
      socket.write(wire.startup(target.params));
      listen();
    };

    socket.once('connect', () => {
      if (!target.ssl || target.path) return begin();
      socket.write(wire.SSL_REQUEST);
      socket.once('data', (answer: Buffer) => {
        if (answer[0] !== 0x53) {
          if (target.ssl === 'prefer' || target.ssl === 'allow') return begin();
          return finish(connectionError('SSL_NOT_SUPPORTED', 'The database does not accept SSL connections (sslmode asks for them).'));
        }
        const options: tls.ConnectionOptions = { socket, servername: net.isIP(place.host) ? undefined : place.host };
        if (target.ssl === 'require' || target.ssl === 'allow' || target.ssl === 'prefer') options.rejectUnauthorized = false;
        else if (typeof target.ssl === 'object') Object.assign(options, target.ssl);
        const secure = tls.connect(options);
        secure.on('error', onError);
        secure.on('close', onClose);
        secure.once('secureConnect', () => {
          socket.removeListener('error', onError);
          socket.removeListener('close', onClose);
          socket = secure;
          begin();
        });
      });
    });
  });
}

/**
 * The startup conversation: authentication (cleartext, MD5, SCRAM-SHA-256), then parameter
 * status until ReadyForQuery. `take` resolves to the session user once ready, else null.
 */
class Handshake {
  private login: string;
  private scram: { nonce: string; clientFirstBare: string; serverSignature?: Buffer } | null = null;

  constructor(
    private readonly target: WireTarget,
    private readonly write: (bytes: Buffer) => void,
  ) {
    this.login = target.user;
  }

  async take(m: wire.BackendMessage): Promise<string | null> {
    switch (m.type) {
      case wire.MSG.error:
        throw wire.errorOf(m.body);
      case wire.MSG.parameterStatus: {
        const name = m.body.toString('utf8', 0, m.body.indexOf(0));
        if (name === 'session_authorization') this.login = m.body.toString('utf8', name.length + 1, m.body.length - 1);
        return null;
      }
      case wire.MSG.readyForQuery:
        return this.login;
      case wire.MSG.authentication:
        await this.authenticate(m.body.readInt32BE(0), m.body.subarray(4));
        return null;
      default:
        return null;
    }
  }

  private async authenticate(kind: number, data: Buffer): Promise<void> {
    const { user, password } = this.target;
    switch (kind) {
      case 0:
        return;
      case 3:
        this.write(wire.password(password));
        return;
      case 5: {
        const md5 = (x: string | Buffer) => createHash('md5').update(x).digest('hex');
        this.write(wire.password(`md5${md5(Buffer.concat([Buffer.from(md5(password + user)), data.subarray(0, 4)]))}`));
        return;
      }
      case 10: {
        const mechanisms = data.toString('utf8').split('\0');
        if (!mechanisms.includes('SCRAM-SHA-256'))
          throw connectionError('AUTH_TYPE_NOT_SUPPORTED', `SASL mechanisms ${mechanisms.join(', ')} are not supported`);
        const nonce = randomBytes(18).toString('base64');
        const clientFirstBare = `n=*,r=${nonce}`;
        this.scram = { nonce, clientFirstBare };
        this.write(wire.saslInitial('SCRAM-SHA-256', Buffer.from(`n,,${clientFirstBare}`)));
        return;
      }
      case 11: {
        if (!this.scram) throw connectionError('SASL_PROTOCOL', 'SCRAM: an unexpected message');
        const serverFirst = data.toString('utf8');
        const f = Object.fromEntries(serverFirst.split(',').map((kv) => [kv[0], kv.slice(2)]));
        if (!f.r?.startsWith(this.scram.nonce) || !f.s || !f.i)
          throw connectionError('SASL_PROTOCOL', 'SCRAM: the server sent a bad first message');
        const salted = await pbkdf2Async(password, Buffer.from(f.s, 'base64'), Number(f.i), 32, 'sha256');
        const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
        const clientKey = hmac(salted, 'Client Key');
        const storedKey = createHash('sha256').update(clientKey).digest();
        const finalWithoutProof = `c=biws,r=${f.r}`;
        const authMessage = `${this.scram.clientFirstBare},${serverFirst},${finalWithoutProof}`;
        const signature = hmac(storedKey, authMessage);
        const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]));
        this.scram.serverSignature = hmac(hmac(salted, 'Server Key'), authMessage);
        this.write(wire.password(Buffer.from(`${finalWithoutProof},p=${proof.toString('base64')}`), true));
        return;
      }
      case 12: {
        const v = /(?:^|,)v=([^,]+)/.exec(data.toString('utf8'))?.[1];
        const expected = this.scram?.serverSignature;
        const got = v ? Buffer.from(v, 'base64') : Buffer.alloc(0);
        if (!expected || got.length !== expected.length || !timingSafeEqual(got, expected)) {
          throw connectionError('SASL_SIGNATURE_MISMATCH', 'SCRAM: the server did not prove it knows the password');
        }
        return;
      }
      default:
        throw connectionError('AUTH_TYPE_NOT_SUPPORTED', `The database asks for an authentication method Plinth does not speak (${kind}).`);
    }
  }
}
