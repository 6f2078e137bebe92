import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino, { type Logger } from 'pino';
import { makeGuards } from './admin/guard.js';
import { registerSqlRunner } from './admin/sql.js';
import { type Auth, createTokenService, registerAuth, type TokenService } from './auth/index.js';
import { registerMessageRoutes } from './admin/messages.js';
import { registerSettingsRoutes } from './admin/settings.js';
import type { Config } from './config/index.js';
import { type Db, migrateSystem, openDatabase } from './db/index.js';
import { makePrincipalResolver, type ProjectKeys } from './http/principal.js';
import { collectRouteDocs } from './http/route-docs.js';
import { type App, createHttpServer } from './http/server.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createMessaging, createSmsTransport, type EmailTransport, type Messaging } from './messaging/index.js';
import { createSchemaCache, registerOpenApi, registerRestRoutes, type SchemaCache } from './rest/index.js';
import { createSettingsStore, loadOrCreateKeys, type SettingsStore } from './settings/index.js';
import { registerStorage, type Storage } from './storage/index.js';

export interface AppOptions {
  config: Config;
  logger?: Logger;
  /** An already open database (tests); otherwise opened from config. */
  db?: Db;
  clock?: Clock;
  /** Tests: an email transport of their own instead of SMTP_URL. */
  emailTransport?: EmailTransport;
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
  log: Logger;
  /** Stops accepting, finishes in-flight requests, closes the database. */
  close(): Promise<void>;
}

const SDK_BUNDLE = fileURLToPath(new URL('../../sdk/dist/plinth.js', import.meta.url));

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

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: LOG_REDACT, censor: '[redacted]' }, base: { service: 'plinth' } });
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
  try {
    await migrateSystem(db);
    const keys = await loadOrCreateKeys(db, {
      dataDir: config.dataDir,
      configured: { publicKey: config.publicKey ?? undefined, secretKey: config.secretKey ?? undefined },
    });
    const tokens = await createTokenService(db, `${config.publicUrl}/v1/auth`, clock);
    const schema = await createSchemaCache(db, log);
    const settings = await createSettingsStore(db, { publicUrl: config.publicUrl, log });
    const app = await createHttpServer({
      logger: log,
      bodyLimit: config.bodyLimit,
      isOriginAllowed: settings.isOriginAllowed,
      trustProxy: config.trustProxy,
    });
    // Before the routes it describes are mounted: the OpenAPI document lists them from their schemas.
    const routeDocs = collectRouteDocs(app, ['/v1/auth/', '/api/v1/storage/']);
    const resolvePrincipal = makePrincipalResolver(keys, tokens.verify);
    const guards = makeGuards(resolvePrincipal);

    app.get('/health', async (_req, reply) => {
      try {
        await db.ping();
        return { status: 'ok' };
      } catch {
        reply.code(503);
        return { code: 'database_unavailable', message: 'The database is unavailable.', status: 'unavailable' };
      }
    });

    registerSqlRunner(app, { db, guards, statementTimeoutMs: config.statementTimeoutMs, onSchemaChange: () => schema.reload() });
    registerRestRoutes(app, { db, schema, resolvePrincipal, maxRows: config.maxRows });
    registerOpenApi(app, { schema, resolvePrincipal, publicUrl: config.publicUrl, extraPaths: routeDocs });

    app.get('/v1/auth/.well-known/jwks.json', async () => tokens.jwks());
    registerSettingsRoutes(app, { settings, guards });
    messaging = createMessaging({
      db,
      clock,
      log,
      smtpUrl: config.smtpUrl,
      smtpFrom: config.smtpFrom,
      sms: createSmsTransport(config.env),
      project: () => ({ name: settings.project().name, templates: settings.auth().email_templates }),
      emailTransport: options.emailTransport,
    });
    registerMessageRoutes(app, { messaging, guards });
    const auth = await registerAuth(app, {
      db,
      tokens,
      clock,
      settings,
      outbox: messaging.outbox,
      smsConfigured: messaging.smsConfigured,
      log,
      resolvePrincipal,
      env: config.env,
      redisUrl: config.redisUrl,
    });

    // File storage (API.md §7): objects under the project's policies on storage.objects.
    storage = await registerStorage(app, {
      db,
      config: config.storage,
      dataDir: config.dataDir,
      publicUrl: config.publicUrl,
      urlTokens: { sign: tokens.signObjectUrl, verify: tokens.verifyObjectUrl },
      resolvePrincipal,
      manage: guards.service,
      clock,
      log,
    });

    app.get('/sdk/plinth.js', async (_req, reply) => {
      if (!existsSync(SDK_BUNDLE)) {
        reply.code(404);
        return { code: 'not_found', message: 'The SDK bundle is not built; run npm run build.' };
      }
      // Public code: any page may import it as a module script (which needs CORS).
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('access-control-allow-origin', '*');
      return readFileSync(SDK_BUNDLE, 'utf8');
    });
    app.get('/console', async (_req, reply) => {
      reply.type('text/html; charset=utf-8');
      return consolePlaceholder(config.publicUrl);
    });
    app.get('/', async (_req, reply) => reply.redirect('/console'));

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
      log,
      close() {
        closing ??= (async () => {
          await app.close();
          await messaging?.close().catch(() => undefined);
          await storage?.close().catch(() => undefined);
          await auth.close().catch(() => undefined);
          await schema.close().catch(() => undefined);
          await settings.close().catch(() => undefined);
          await db.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await messaging?.close().catch(() => undefined);
    await storage?.close().catch(() => undefined);
    if (!options.db) await db.close().catch(() => undefined);
    throw err;
  }
}

function consolePlaceholder(url: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plinth console</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px}</style></head>
<body><h1>Plinth</h1><p>The web console is coming. The API is running at <code>${url}/api/v1</code>.</p>
<ul><li>REST: <code>GET ${url}/api/v1/db/{table}</code></li><li>OpenAPI: <code>${url}/api/v1/openapi.json</code></li>
<li>SQL: <code>npx plinth sql "select 1"</code></li></ul></body></html>`;
}
