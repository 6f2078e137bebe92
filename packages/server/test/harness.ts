import type { LightMyRequestResponse } from 'fastify';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createLogger, type Plinth, buildApp } from '../src/app.js';
import { DEFAULT_PROJECT, loadConfig, type ProjectSettings } from '../src/config/index.js';
import { fakeClock } from '../src/lib/clock.js';
import { TEST_DB_KIND, freshDbTarget } from './db.js';
import { type SmtpSink, startSmtpSink } from './mail.js';
import { type SmsSink, startSmsSink } from './sms.js';

export { TEST_DB_KIND };

export interface TestServer extends Plinth {
  clock: ReturnType<typeof fakeClock>;
  /** Headers for each role: `as.service`, `as.anon`, `as.user(token)`. */
  as: {
    service: Record<string, string>;
    anon: Record<string, string>;
    user: (accessToken: string) => Record<string, string>;
  };
  /**
   * A user access token signed with the project's key for `sub`, for an open session: the user
   * (id `sub`) and a session are made in the database when missing, since the API refuses
   * tokens whose session is not open.
   */
  mintToken(sub: string, extra?: Record<string, unknown>, ttlSeconds?: number): Promise<string>;
  /** The SMTP sink the server sends to (`{ smtp: true }`), else null: mail goes to the dev inbox. */
  mail: SmtpSink | null;
  /** The webhook SMS sink (`{ sms: true }`), else null. */
  sms: SmsSink | null;
  /** Runs SQL through the SQL runner as the secret key. */
  sql(query: string): Promise<LightMyRequestResponse>;
  /** Runs SQL as `sql` does and fails the test unless it answered 200; the runner's `results`. */
  sqlOk(query: string): Promise<Array<{ command: string; rows: Array<Record<string, unknown>> }>>;
  /** Stops the server and drops its database. */
  stop(): Promise<void>;
}

/**
 * A whole Plinth on a fresh database (PGlite, or PostgreSQL when PLINTH_TEST_DB=postgres),
 * driven in-process with `app.inject`. `{ smtp: true }` sends its email to a real SMTP sink,
 * `{ sms: true }` its SMS to a webhook sink.
 * @example const t = await createTestServer(); const res = await t.app.inject({ url: '/health' });
 */
export interface TestServerOptions {
  smtp?: boolean;
  sms?: boolean;
  /** Every log line (JSON text, with the server's redaction) is pushed here; set LOG_LEVEL in env. */
  logs?: string[];
  /** Project settings the server runs with, as if read from plinth.json (`api.schemas`, say). */
  project?: Partial<ProjectSettings>;
}

/** A pino logger writing into `lines`, redacting as the real server does. */
export function capturingLogger(level: string, lines: string[]) {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return createLogger(level, sink);
}

export async function createTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const target = await freshDbTarget({ migrated: true });
  const mail = options.smtp ? await startSmtpSink() : null;
  if (mail) env = { SMTP_URL: mail.url, SMTP_FROM: 'Plinth Test <no-reply@plinth.test>', ...env };
  const sms = options.sms ? await startSmsSink() : null;
  if (sms) env = { SMS_PROVIDER: 'webhook', SMS_WEBHOOK_URL: sms.url, ...env };
  const clock = fakeClock(Date.now());
  const config = loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', PUBLIC_URL: 'http://localhost:8080', ...env },
    {
      dataDir: target.dataDir,
      databaseUrl: target.databaseUrl,
      port: 0,
      ...(options.project
        ? { project: { root: target.dataDir, file: 'plinth.json', settings: { ...DEFAULT_PROJECT, ...options.project } } }
        : {}),
    },
    target.dataDir,
  );
  const logger = options.logs ? capturingLogger(config.logLevel, options.logs) : pino({ level: config.logLevel });
  const plinth = await buildApp({ config, clock, logger });
  const as = {
    service: { authorization: `Bearer ${plinth.keys.secretKey}` },
    anon: { apikey: plinth.keys.publicKey },
    user: (t: string) => ({ apikey: plinth.keys.publicKey, authorization: `Bearer ${t}` }),
  };
  return {
    ...plinth,
    clock,
    as,
    mail,
    sms,
    async mintToken(sub, extra = {}, ttl = 3600) {
      const sessionId = await plinth.db.transaction(async (tx) => {
        await tx.query('insert into auth.users (id) values ($1) on conflict (id) do nothing', [sub]);
        const { rows } = await tx.query<{ id: string }>('insert into auth.sessions (user_id) values ($1) returning id', [sub]);
        return rows[0].id;
      });
      return (await plinth.tokens.sign({ sub, session_id: sessionId, ...extra }, ttl)).token;
    },
    sql: (query) => plinth.app.inject({ method: 'POST', url: '/api/v1/sql', headers: as.service, payload: { query } }),
    async sqlOk(query) {
      const res = await plinth.app.inject({ method: 'POST', url: '/api/v1/sql', headers: as.service, payload: { query } });
      if (res.statusCode !== 200) throw new Error(`SQL answered ${res.statusCode}: ${res.body}\n${query}`);
      return res.json().results;
    },
    async stop() {
      await plinth.close();
      await mail?.stop();
      await sms?.close();
      await target.cleanup();
    },
  };
}
