import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parseStorageConfig, type StorageConfig } from './storage.js';

export { parseSize, type S3Config, type StorageConfig } from './storage.js';

/** Typed configuration. The only module that reads `process.env`. */
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
  smtpUrl: string | null;
  smtpFrom: string;
  redisUrl: string | null;
  dbPoolSize: number;
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
  env: Record<string, string | undefined>;
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
  if (bad !== undefined) throw new Error(`config: TRUST_PROXY must be true, false or a list of proxy addresses/CIDRs; "${bad}" is none`);
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

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`config: ${name} must be a non-negative integer, got "${value}"`);
  return n;
}

export interface ConfigOverrides {
  port?: number;
  dataDir?: string;
  databaseUrl?: string | null;
  publicUrl?: string;
}

/**
 * Loads config from the environment, with `.env` in the working directory filling gaps.
 * @example const config = loadConfig(process.env, { port: 8080 });
 */
export function loadConfig(processEnv: Record<string, string | undefined>, overrides: ConfigOverrides = {}, cwd = process.cwd()): Config {
  const dotenvPath = resolve(cwd, '.env');
  const fileEnv = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {};
  const env: Record<string, string | undefined> = { ...fileEnv, ...processEnv };
  const port = overrides.port ?? int(env.PORT, 8080, 'PORT');
  const publicUrl = (overrides.publicUrl ?? env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    publicUrl,
    dataDir: resolve(cwd, overrides.dataDir ?? env.DATA_DIR ?? './data'),
    databaseUrl: overrides.databaseUrl !== undefined ? overrides.databaseUrl : env.DATABASE_URL || null,
    logLevel: env.LOG_LEVEL ?? 'info',
    maxRows: Math.max(1, int(env.MAX_ROWS, 1000, 'MAX_ROWS')),
    bodyLimit: int(env.BODY_LIMIT, 1024 * 1024, 'BODY_LIMIT'),
    publicKey: env.PLINTH_PUBLIC_KEY || null,
    secretKey: env.PLINTH_SECRET_KEY || null,
    statementTimeoutMs: int(env.STATEMENT_TIMEOUT_MS, 30_000, 'STATEMENT_TIMEOUT_MS'),
    smtpUrl: env.SMTP_URL || null,
    smtpFrom: env.SMTP_FROM || 'Plinth <no-reply@localhost>',
    redisUrl: env.REDIS_URL || null,
    dbPoolSize: Math.max(1, int(env.DB_POOL_SIZE, 10, 'DB_POOL_SIZE')),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    storage: parseStorageConfig(env),
    requestTimeoutMs: int(env.REQUEST_TIMEOUT_MS, 120_000, 'REQUEST_TIMEOUT_MS'),
    env,
  };
}
