import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { type InitialAdmin, parseInitialAdmin } from './admin.js';
import { type AuthConfig, parseAuth } from './auth.js';
import { type OAuthEndpoints, parseOAuth } from './oauth.js';
import { ConfigError, type Env, int } from './parse.js';
import type { Project } from './project.js';
import { parseRealtime, type RealtimeConfig } from './realtime.js';
import { parseSms, type SmsConfig } from './sms.js';
import { parseStorageConfig, type StorageConfig } from './storage.js';
import { parseWebhooks, type WebhooksConfig } from './webhooks.js';

export type { S3Config, StorageConfig } from './storage.js';

export { type InitialAdmin, parseInitialAdmin } from './admin.js';
export { type Argon2Params, type AuthConfig, OWASP_ARGON2, parseAuth } from './auth.js';
export { type OAuthEndpoints, parseOAuth } from './oauth.js';
export { ConfigError, type Env, type RateRule, size } from './parse.js';
export {
  DEFAULT_PROJECT,
  findProject,
  PROJECT_FILE,
  type Project,
  type ProjectSettings,
  PROJECT_KEYS,
  type ProjectBucket,
  parseProjectFile,
  projectFileText,
  resolveAuthSecrets,
  resolveWebhookHeaders,
  supabaseProject,
} from './project.js';
export {
  parseSupabaseConfig,
  projectSettingsOf,
  SUPABASE_CONFIG,
  SUPABASE_LOCAL_JWT_SECRET,
  type SupabaseSettings,
} from './supabase.js';
export { duration, parseRealtime, type RealtimeConfig } from './realtime.js';
export { ELKS_SENDER, parseSms, SMS_PROVIDERS, type SmsConfig } from './sms.js';
export { parseWebhooks, type WebhooksConfig } from './webhooks.js';

/**
 * Typed configuration, parsed once: the only module that reads the environment. Each area gets
 * its own section (auth, oauth, sms, smtp, admin…), never the raw variables.
 */
export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  logLevel: string;
  maxRows: number;
  bodyLimit: number;
  publicKey: string | null;
  secretKey: string | null;
  statementTimeoutMs: number;
  /** `SMTP_URL` (null: mail goes to the dev inbox) and `SMTP_FROM`. */
  smtp: { url: string | null; from: string };
  redisUrl: string | null;
  dbPoolSize: number;
  /** The app's SQL migrations to apply at start (`MIGRATIONS_DIR`, `plinth start --migrate`), or null. */
  migrationsDir: string | null;
  /**
   * Which proxies' `X-Forwarded-For` to believe for the client IP (per-IP limits, session IP):
   * none by default, else `true` (any: only behind a proxy that overwrites the header), or a
   * list of proxy addresses / CIDRs.
   */
  trustProxy: boolean | string[];
  /** File storage (STORAGE_BACKEND, STORAGE_MAX_FILE_SIZE, S3_*): config/storage.ts. */
  storage: StorageConfig;
  /** How long a client may take to send a whole request (REQUEST_TIMEOUT_MS; 0: no limit). */
  requestTimeoutMs: number;
  /** `DATABASE_AUTHENTICATOR_URL`: the operator's own login for API traffic (PostgreSQL), else null. */
  authenticatorUrl: string | null;
  /** The auth area's tunables (`AUTH_*`). */
  auth: AuthConfig;
  /** Social providers' endpoints (`OAUTH_*_URL`): a local server in tests, a proxy. */
  oauth: OAuthEndpoints;
  /** The SMS provider and its credentials (`SMS_PROVIDER`, …). */
  sms: SmsConfig;
  /** The console's first admin (`ADMIN_EMAIL`, `ADMIN_PASSWORD`). */
  admin: { initial: InitialAdmin };
  /**
   * How long an instance holds an outbox message it claimed (OUTBOX_LEASE_SECONDS, default 120):
   * the claim of an instance that died runs out after this, and another one sends the message.
   */
  outboxLeaseMs: number;
  /** Processes serving the port (`WORKERS`, `plinth start --workers`; `auto`: one per core). */
  workers: number;
  /** Realtime: change retention and the WebSocket limits (`REALTIME_*`; config/realtime.ts). */
  realtime: RealtimeConfig;
  /** Database webhooks: private addresses, retries, timeout (`WEBHOOK_*`; config/webhooks.ts). */
  webhooks: WebhooksConfig;
  /** The project folder (plinth.json) this configuration was read for, or null. */
  project: Project | null;
  /** The variable DATABASE_URL was read from (a project's `database_url_env`), for messages. */
  databaseUrlVariable: string;
}

/**
 * `TRUST_PROXY`: unset or `false` → trust no proxy; `true`; or a comma list of proxy addresses
 * and CIDRs (`10.0.0.0/8,127.0.0.1`). No hop counts: Fastify ignores them, since a count cannot
 * tell a proxy from a client that sends enough hops itself.
 * @example parseTrustProxy('10.0.0.0/8, 127.0.0.1') // ['10.0.0.0/8', '127.0.0.1']
 */
export function parseTrustProxy(value: string | undefined): boolean | string[] {
  const v = (value ?? '').trim();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  const list = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const bad = list.find((x) => {
    const [addr, bits, ...rest] = x.split('/');
    return rest.length > 0 || isIP(addr) === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits));
  });
  if (bad !== undefined) throw new ConfigError(`TRUST_PROXY must be true, false or a list of proxy addresses/CIDRs; "${bad}" is none`);
  return list;
}

/** Parses a `.env` file: `KEY=value` lines, `#` comments, optional quotes. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line
      .slice(0, eq)
      .replace(/^export\s+/, '')
      .trim();
    let value = line.slice(eq + 1).trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1);
    }
    out[key] = value;
  }
  return out;
}

function port(env: Env, fallback: number): number {
  const n = int(env, 'PORT', fallback);
  if (n > 65535) throw new ConfigError(`PORT must be a port number (0–65535), got "${env.PORT}"`);
  return n;
}

/** `SMTP_URL`: `smtp://user:pass@host:587` or `smtps://…:465` (query options as nodemailer reads them). */
function smtpUrl(env: Env): string | null {
  const value = env.SMTP_URL?.trim();
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('SMTP_URL is not a URL (smtp://user:password@host:587 or smtps://…:465)');
  }
  if (!/^smtps?:$/.test(url.protocol)) throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  return value;
}

/**
 * `DATABASE_URL`, checked before any connection: a `postgres://` or `postgresql://` URL with a
 * host. The value is never repeated in the message: it holds the password.
 * @example databaseUrl('postgres://app:secret@db.example.com:5432/app') // the same string
 */
export function databaseUrl(value: string | undefined, name = 'DATABASE_URL'): string | null {
  const v = value?.trim();
  if (!v) return null;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(
      `${name} is not a URL; it takes postgres://user:password@host:5432/database (special characters in the password percent-encoded)`,
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  if (!url.hostname && !url.searchParams.get('host'))
    throw new ConfigError(`${name} has no host: postgres://user:password@host:5432/database`);
  return v;
}

/**
 * Where DATABASE_URL points, for messages: `host:port/database`, never the user or password.
 * @example databaseWhere('postgres://app:secret@db.example.com/app') // 'db.example.com:5432/app'
 */
export function databaseWhere(value: string): string {
  try {
    const url = new URL(value);
    const host = url.hostname || url.searchParams.get('host') || 'localhost';
    return `${host}:${url.port || 5432}${url.pathname.length > 1 ? url.pathname : ''}`;
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * `WORKERS` / `--workers`: a whole number from 1 to 64, or `auto` for one per core.
 * @example parseWorkers('auto', 'WORKERS') // 2 on a 2-core machine
 */
export function parseWorkers(value: string | undefined, name = 'WORKERS'): number {
  const v = (value ?? '').trim();
  if (v === '') return 1;
  if (v === 'auto') return Math.max(1, availableParallelism());
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 64)
    throw new ConfigError(`${name} must be a number of processes from 1 to 64, or auto (one per core), got "${v}"`);
  return n;
}

/** The SQL runner's statement timeout when STATEMENT_TIMEOUT_MS is not set (PostgreSQL only). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

export interface ConfigOverrides {
  port?: number;
  dataDir?: string;
  databaseUrl?: string | null;
  publicUrl?: string;
  migrationsDir?: string | null;
  /** `plinth start --workers`, as given. */
  workers?: string;
  /**
   * The project (plinth.json) the command acts on: its `.env` is read instead of the working
   * directory's, and its settings come before the defaults (the environment and flags win).
   */
  project?: Project | null;
}

/**
 * Loads config from the environment, with the `.env` of the project (or else of the working
 * directory) filling gaps, then the project's plinth.json, then the defaults.
 * @example const config = loadConfig(process.env, { port: 8080 });
 */
export function loadConfig(processEnv: Record<string, string | undefined>, overrides: ConfigOverrides = {}, cwd = process.cwd()): Config {
  const project = overrides.project ?? null;
  const base = project?.root ?? cwd;
  const dotenvPath = resolve(base, '.env');
  const fileEnv = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {};
  const env: Record<string, string | undefined> = { ...fileEnv, ...processEnv };
  const listenPort = overrides.port ?? port(env, project?.settings.port ?? 8080);
  const redisUrl = env.REDIS_URL || null;
  const publicUrl = (overrides.publicUrl ?? env.PUBLIC_URL ?? `http://localhost:${listenPort}`).replace(/\/+$/, '');
  const databaseUrlVariable = project?.settings.database_url_env ?? 'DATABASE_URL';
  return {
    port: listenPort,
    // A Supabase folder is served for local development, as `supabase start` is: on loopback.
    host: env.HOST ?? (project?.supabase ? '127.0.0.1' : '0.0.0.0'),
    publicUrl,
    dataDir:
      overrides.dataDir !== undefined
        ? resolve(cwd, overrides.dataDir)
        : resolve(base, env.DATA_DIR ?? project?.settings.data_dir ?? './data'),
    databaseUrl: overrides.databaseUrl !== undefined ? overrides.databaseUrl : databaseUrl(env[databaseUrlVariable], databaseUrlVariable),
    databaseUrlVariable,
    project,
    logLevel: env.LOG_LEVEL ?? 'info',
    maxRows: int(env, 'MAX_ROWS', 1000, { min: 1 }),
    bodyLimit: int(env, 'BODY_LIMIT', 1024 * 1024),
    publicKey: env.PLINTH_PUBLIC_KEY || null,
    secretKey: env.PLINTH_SECRET_KEY || null,
    statementTimeoutMs: int(env, 'STATEMENT_TIMEOUT_MS', DEFAULT_STATEMENT_TIMEOUT_MS),
    smtp: { url: smtpUrl(env), from: env.SMTP_FROM || 'Plinth <no-reply@localhost>' },
    redisUrl,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, { min: 1 }),
    migrationsDir:
      overrides.migrationsDir !== undefined ? overrides.migrationsDir : env.MIGRATIONS_DIR ? resolve(base, env.MIGRATIONS_DIR) : null,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 120_000),
    authenticatorUrl: databaseUrl(env.DATABASE_AUTHENTICATOR_URL, 'DATABASE_AUTHENTICATOR_URL'),
    auth: parseAuth(env, redisUrl),
    oauth: parseOAuth(env),
    sms: parseSms(env),
    admin: { initial: parseInitialAdmin(env) },
    // A Supabase folder's `[storage.image_transformation] enabled = false` turns transforms off too.
    storage: parseStorageConfig(
      project?.supabase?.settings.storage.image_transformation === false ? { ...env, STORAGE_IMAGE_TRANSFORMS: 'false' } : env,
    ),
    outboxLeaseMs: int(env, 'OUTBOX_LEASE_SECONDS', 120, { min: 1 }) * 1000,
    workers: overrides.workers !== undefined ? parseWorkers(overrides.workers, '--workers') : parseWorkers(env.WORKERS),
    realtime: parseRealtime(env),
    webhooks: parseWebhooks(env),
  };
}
