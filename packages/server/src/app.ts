import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino, { type Logger } from 'pino';
import { type AdminArea, createAdminSessions, registerAdmin, registerConsole } from './admin/index.js';
import {
  type Auth,
  createSessionGate,
  createTokenService,
  gatedVerifier,
  oidcDiscovery,
  oidcSettingsCheck,
  registerAuth,
  type SessionGate,
  type TokenService,
} from './auth/index.js';
import type { Config } from './config/index.js';
import { type Db, DbUnavailableError, type DdlWatch, openDatabase, outageLogHook, prepareDatabase } from './db/index.js';
import {
  type App,
  createCallerGuards,
  createHttpServer,
  createMetrics,
  createPrincipalResolver,
  createSupabaseKeys,
  type ProjectKeys,
  registerRouteDocs,
} from './http/index.js';
import { systemClock, type Clock } from './lib/index.js';
import { createMessaging, createSmsTransport, type EmailTransport, type Messaging } from './messaging/index.js';
import { type Realtime, registerRealtime } from './realtime/index.js';
import { createSchemaCache, registerOpenApi, registerRestRoutes, type SchemaCache } from './rest/index.js';
import { createSettingsStore, loadOrCreateKeys, type SettingsStore } from './settings/index.js';
import { registerStorage, type Storage } from './storage/index.js';
import { registerSupabaseAuth, registerSupabaseRealtime, registerSupabaseRest, registerSupabaseStorage } from './supabase/index.js';
import { registerWebhooks, type Webhooks } from './webhooks/index.js';
import { type Functions, registerFunctions } from './functions/index.js';
import { registerSupabaseFunctions } from './supabase/index.js';

export interface AppOptions {
  config: Config;
  logger?: Logger;
  /** An already open database (tests); otherwise opened from config. */
  db?: Db;
  clock?: Clock;
  /** Tests: how often function schedules look for due runs (null: only when a test calls `functions.schedules.tick()`). */
  schedulePollMs?: number | null;
  /** Tests: an email transport of their own instead of SMTP_URL. */
  emailTransport?: EmailTransport;
  /** GET /metrics also reports Node's own (CPU, memory, event loop, GC): `plinth start` only. */
  processMetrics?: boolean;
}

export interface Plinth {
  app: App;
  db: Db;
  config: Config;
  keys: ProjectKeys;
  tokens: TokenService;
  auth: Auth;
  settings: SettingsStore;
  messaging: Messaging;
  schema: SchemaCache;
  storage: Storage;
  /** Realtime (docs/realtime.md): the change log this instance reads and its WebSocket connections. */
  realtime: Realtime;
  /** Database webhooks (docs/webhooks.md): this instance's fan-out of the change log and its send queue. */
  webhooks: Webhooks;
  /** Console admins; `admin.setupToken` is the one-time token of the setup link to print, or null. */
  admin: AdminArea;
  log: Logger;
  /** Stops accepting, finishes in-flight requests, closes the database. */
  close(): Promise<void>;
}

/** The SDK's single-file build, wherever npm put @plinth/sdk (the workspace, or the installed package's own copy). */
const SDK_BUNDLE = fileURLToPath(import.meta.resolve('@plinth/sdk/plinth.js'));

/** The redaction every log line gets: no secret, token or password is ever written. */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.apikey',
  'req.headers.cookie',
  '*.password',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.secret_key',
  '*.client_secret',
  '*.private_key',
];

/**
 * The server's logger: JSON lines on stdout (or `destination`), secrets redacted, and a
 * database outage folded into one line a minute (db/outage-log.ts).
 * @example const log = createLogger('info');
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: LOG_REDACT, censor: '[redacted]' },
    base: { service: 'plinth' },
    hooks: { logMethod: outageLogHook() },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The composition root: opens the database, migrates, loads keys, mounts every area.
 * @example const plinth = await buildApp({ config: loadConfig(process.env) }); await plinth.app.listen({ port: 8080 });
 */
export async function buildApp(options: AppOptions): Promise<Plinth> {
  const { config } = options;
  const log = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const db = options.db ?? (await openDatabase(config));
  let messaging: Messaging | undefined;
  let storage: Storage | undefined;
  let realtime: Realtime | undefined;
  let webhooks: Webhooks | undefined;
  let gate: SessionGate | undefined;
  let ddl: DdlWatch | undefined;
  try {
    ddl = await prepareDatabase(db, { log, databaseUrl: config.databaseUrl, authenticatorUrl: config.authenticatorUrl ?? undefined });
    const keys = await loadOrCreateKeys(db, {
      dataDir: config.dataDir,
      configured: { publicKey: config.publicKey ?? undefined, secretKey: config.secretKey ?? undefined },
    });
    const tokens = await createTokenService(db, `${config.publicUrl}/v1/auth`, clock);
    gate = await createSessionGate(db, clock, config.auth.sessionCheckMs);
    // /rest/v1's profiles (a Supabase folder's `[api] schemas`, plinth.json `api.schemas`): each
    // one's snapshot is kept beside public's (docs/supabase.md, "Schemas other than public").
    const apiSchemas = config.project?.settings.api?.schemas ?? ['public'];
    const schema = await createSchemaCache(db, log, { schemas: apiSchemas });
    // OpenID Connect providers' documents: one cache for sign-in and for the check of a settings
    // change, so a provider saved a moment ago signs in without asking again.
    const discovery = oidcDiscovery({ clock, log, publicUrl: config.publicUrl });
    const settings = await createSettingsStore(db, { publicUrl: config.publicUrl, log, check: oidcSettingsCheck(discovery) });
    const metrics = createMetrics({ processMetrics: options.processMetrics });
    const app = await createHttpServer({
      metrics,
      logger: log,
      bodyLimit: config.bodyLimit,
      isOriginAllowed: settings.isOriginAllowed,
      corsAdvice: settings.corsAdvice,
      trustProxy: config.trustProxy,
      requestTimeoutMs: config.requestTimeoutMs,
    });
    // Before the routes it describes are mounted: the OpenAPI document lists them from their
    // schemas (every route under these prefixes that declares one; the tables are rest/openapi's).
    const routeDocs = await registerRouteDocs(app, {
      include: ['/v1/auth/', '/api/v1/'],
      exclude: ['/api/v1/db/', '/api/v1/openapi.json'],
    });
    // The console's sessions are looked up by the one place that works out who is calling.
    const consoleSessions = createAdminSessions({ db, clock });
    // An answer about a revocation leaves once every instance has heard of it (sessions/gate.ts):
    // the client may send the ended session's token to any of them next. Sessions end in writes
    // and in the auth routes (the social callback is a GET); reads elsewhere never wait.
    const sessionGate = gate;
    const settle = (_req: unknown, _reply: unknown, payload: unknown, done: (err: null, payload: unknown) => void) => {
      const settled = sessionGate.settled();
      if (!settled) return done(null, payload);
      settled.then(() => done(null, payload));
    };
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!route.url.startsWith('/v1/auth/') && methods.every((m) => m === 'GET' || m === 'HEAD')) return;
      const own = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
      route.onSend = [...own, settle] as typeof route.onSend;
    });
    // Keys and tokens, a token's session checked: what every API area takes its caller from.
    const resolvePrincipal = createPrincipalResolver(
      keys,
      gatedVerifier(tokens, gate, () => settings.auth().mfa_enforcement),
      createSupabaseKeys(config.project?.supabase?.settings, config.host) ?? undefined, // a Supabase folder's keys (issue 33)
    );
    const callers = createCallerGuards(resolvePrincipal, {
      sessions: consoleSessions.resolve,
      publicOrigin: new URL(config.publicUrl).origin,
    });

    app.get('/health', async (_req, reply) => {
      try {
        await db.ping();
        return { status: 'ok' };
      } catch (err) {
        reply.code(503);
        // Names the database and the cause (the operator reads this, not an end-user); an
        // outage is one line a minute in the log, however often /health is asked.
        const message = err instanceof DbUnavailableError ? err.message : 'The database is unavailable.';
        log.warn(
          { err: err instanceof DbUnavailableError ? err : new DbUnavailableError(message, 'health') },
          'health: database unavailable',
        );
        return { code: 'database_unavailable', message, status: 'unavailable' };
      }
    });

    registerOpenApi(app, { db, schema, callers, publicUrl: config.publicUrl, routeDocs });

    messaging = createMessaging({
      db,
      clock,
      log,
      smtpUrl: config.smtp.url,
      smtpFrom: config.smtp.from,
      sms: createSmsTransport(config.sms),
      project: () => ({ name: settings.project().name, templates: settings.auth().email_templates }),
      emailTransport: options.emailTransport,
      leaseMs: config.outboxLeaseMs,
    });
    const auth = await registerAuth(app, {
      db,
      tokens,
      clock,
      settings,
      outbox: messaging.outbox,
      smsConfigured: messaging.smsConfigured,
      log,
      callers,
      config: config.auth,
      gate,
      oauth: config.oauth,
      discovery,
    });
    const admin = await registerAdmin(app, {
      db,
      clock,
      keys,
      settings,
      messaging,
      callers,
      sessions: consoleSessions,
      hasher: auth.hasher,
      hooks: {
        accounts: auth.accounts,
        resendVerification: (email) => auth.services.verification.resend({ email }),
        secondFactors: auth.secondFactors,
        rotateSigningKey: (o) => auth.rotateSigningKey(o),
      },
      oidcTests: { start: auth.services.oauth.startTest, result: auth.services.oauth.testResult },
      publicUrl: config.publicUrl,
      statementTimeoutMs: config.statementTimeoutMs,
      onSchemaChange: () => schema.reload(),
      signinLimits: auth.adminSigninLimits,
      initialAdmin: config.admin.initial,
      metrics,
      log,
      // Storage is mounted after admin (it takes admin's guards): its sweeper is looked up per backup.
      backups: {
        dataDir: config.dataDir,
        storage: config.storage,
        hold: () => (storage ? storage.sweeper.hold() : Promise.resolve(() => undefined)),
      },
    });

    // GoTrue's /auth/v1 on the same auth services (docs/supabase.md), after admin: its admin API's writes are audited.
    await registerSupabaseAuth(app, {
      auth,
      db,
      settings,
      clock,
      callers,
      publicUrl: config.publicUrl,
      manualLinking: config.project?.supabase ? config.project.supabase.settings.auth.enable_manual_linking : true,
    });

    // REST after admin: the audit log's hook (admin's) is mounted on the routes that come after it,
    // and the console's row changes are audited (review round 3, R14).
    registerRestRoutes(app, { db, schema, callers, maxRows: config.maxRows });
    // PostgREST's grammar on the same engine (docs/supabase.md, "/rest/v1").
    await registerSupabaseRest(app, { db, schema, callers, maxRows: config.maxRows, publicUrl: config.publicUrl, schemas: apiSchemas });

    // File storage (docs/storage.md): objects under the project's policies on storage.objects.
    storage = await registerStorage(app, {
      db,
      config: config.storage,
      dataDir: config.dataDir,
      publicUrl: config.publicUrl,
      urlTokens: { sign: tokens.signObjectUrl, verify: tokens.verifyObjectUrl },
      callers,
      clock,
      log,
    });
    // Supabase Storage's paths and shapes on the same storage (docs/supabase.md, "/storage/v1").
    await registerSupabaseStorage(app, { storage, callers });

    // Realtime (docs/realtime.md): changes of the enabled tables over a WebSocket, under the same RLS
    // as reads; the principal arrives as for REST.
    realtime = await registerRealtime(app, {
      db,
      schema,
      config: config.realtime,
      resolvePrincipal,
      manage: admin.guards.manage,
      isOriginAllowed: settings.isOriginAllowed,
      clock,
      log,
      metrics,
      redisUrl: config.redisUrl,
      project: tokens.issuer,
    });
    // Supabase Realtime's Phoenix channels (docs/supabase.md, "Realtime channels") under realtime's limits.
    await registerSupabaseRealtime(app, { realtime, resolvePrincipal, config: config.realtime, isOriginAllowed: settings.isOriginAllowed });

    // Database webhooks (docs/webhooks.md): changes of the change log POSTed, signed, to the project's
    // endpoints. Management as the other management routes (admin's guard; docs/webhooks.md says
    // which admin roles may change them).
    // Functions are mounted after webhooks; a `function:<name>` target reaches them through this holder.
    let fns: Functions | null = null;
    webhooks = await registerWebhooks(app, {
      db,
      schema,
      config: config.webhooks,
      leaseMs: config.outboxLeaseMs,
      guards: { read: admin.guards.manage, write: admin.guards.manage },
      clock,
      log,
      metrics,
      functions: {
        exists: (name) => fns?.exists(name) ?? false,
        async deliver(name, headers, body) {
          if (!fns) return { status: null, response: 'the functions are not started yet' };
          const out = await fns.invokeAsService(name, body, headers);
          return out.ok
            ? { status: out.status, response: out.body ? out.body.subarray(0, 4000).toString('utf8') : '' }
            : { status: null, response: `${out.code}: ${out.message}` };
        },
      },
    });

    // Functions (docs/functions.md): the project's own code in worker threads, at /api/v1/functions and Supabase's /functions/v1.
    const functions = await registerFunctions(app, { config, callers, keys, log, db, clock, schedulePollMs: options.schedulePollMs });
    fns = functions;
    // Auth hooks of function:<name> (auth/hooks.ts): called as the service with the hook's event.
    auth.useFunctionHooks(async (name, body) => {
      const out = await functions.invokeAsService(name, body);
      if (!out.ok) throw new Error(`${out.code}: ${out.message}`);
      return { status: out.status, body: out.body ? out.body.toString('utf8') : '' };
    });
    await registerSupabaseFunctions(app, { functions, bodyLimit: config.bodyLimit });

    app.get('/sdk/plinth.js', async (_req, reply) => {
      if (!existsSync(SDK_BUNDLE)) {
        reply.code(404);
        return { code: 'not_found', message: 'The SDK bundle is not built; run npm run build.' };
      }
      // Public code: any page may import it as a module script (which needs CORS).
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('access-control-allow-origin', '*');
      return readFileSync(SDK_BUNDLE, 'utf8');
    });
    await registerConsole(app);

    await app.ready();
    let closing: Promise<void> | null = null;
    return {
      app,
      db,
      config,
      keys,
      tokens,
      auth,
      settings,
      messaging: messaging,
      schema,
      storage,
      realtime,
      webhooks,
      admin,
      log,
      close() {
        closing ??= (async () => {
          // First: stop accepting (and let requests in flight finish; WebSockets get 1001).
          await app.close();
          await webhooks?.close().catch(() => undefined);
          await realtime?.close().catch(() => undefined);
          await messaging?.close().catch(() => undefined);
          await storage?.close().catch(() => undefined);
          await auth.close().catch(() => undefined);
          await gate?.close().catch(() => undefined);
          await tokens.close().catch(() => undefined);
          await schema.close().catch(() => undefined);
          await settings.close().catch(() => undefined);
          await ddl?.stop();
          await db.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await webhooks?.close().catch(() => undefined);
    await realtime?.close().catch(() => undefined);
    await messaging?.close().catch(() => undefined);
    await storage?.close().catch(() => undefined);
    await gate?.close().catch(() => undefined);
    await ddl?.stop();
    if (!options.db) await db.close().catch(() => undefined);
    throw err;
  }
}
