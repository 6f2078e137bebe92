/**
 * A function's secrets: what its worker gets as its whole environment (`process.env`,
 * `Deno.env`, `ctx.secrets`). The server's own environment is never handed over: the variables
 * come from files of the project, read again when the functions are reloaded:
 * - the functions folder's `.env` (`functions/.env`, or `supabase/functions/.env` as the
 *   Supabase CLI reads it), all of it;
 * - the project's `.env`, minus the variables the server itself reads (its keys, database URL,
 *   SMTP, SMS, S3 and OAuth credentials, its tuning): SERVER_VARIABLE below;
 * - over both, the secrets set through the admin API (`plinth secrets set --url`, the console),
 *   stored sealed in the database so that every instance has the same (createStoredSecrets).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { parseDotenv } from '../config/index.js';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/index.js';

/** The server's own variables (config/ reads them), never a function's secret. */
const SERVER_VARIABLE =
  /^(PLINTH_|DATABASE_|DB_|SMTP_|SMS_|S3_|REDIS_|AUTH_|OAUTH_|ADMIN_|REALTIME_|WEBHOOK_|STORAGE_|OUTBOX_|TWILIO_|ELKS_|VONAGE_|FUNCTIONS_)|^(PORT|HOST|PUBLIC_URL|DATA_DIR|LOG_LEVEL|MAX_ROWS|BODY_LIMIT|STATEMENT_TIMEOUT_MS|MIGRATIONS_DIR|TRUST_PROXY|REQUEST_TIMEOUT_MS|WORKERS)$/;

const read = (file: string) => (existsSync(file) ? parseDotenv(readFileSync(file, 'utf8')) : {});

/**
 * The secrets of a project's functions.
 * @example readSecrets('/app', '/app/functions', 'DATABASE_URL') // { STRIPE_KEY: 'sk_test_…' }
 */
export function readSecrets(root: string, functionsDir: string, databaseUrlVariable: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(read(join(root, '.env')))) if (!SERVER_VARIABLE.test(k) && k !== databaseUrlVariable) out[k] = v;
  return { ...out, ...read(join(functionsDir, '.env')) };
}

/** A secret's name: an environment variable's (letters, digits and _, not starting with a digit). */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAME = SECRET_NAME;

/**
 * The names in the functions folder's `.env` (what `plinth secrets list` shows; values never leave).
 * @example secretNames('/app/functions') // ['STRIPE_KEY']
 */
export function secretNames(functionsDir: string): string[] {
  return Object.keys(read(join(functionsDir, '.env'))).sort();
}

/**
 * Sets (`value` a string) or removes (`null`) one secret of the functions folder's `.env`, the
 * file's other lines kept as they were (the console's secrets, as `plinth secrets set|unset`).
 * Returns false when a removed name was not there. Throws Error on a bad name or a line break.
 * @example writeSecret('/app/functions', 'STRIPE_KEY', 'sk_test_1')
 */
export function writeSecret(functionsDir: string, name: string, value: string | null): boolean {
  if (!NAME.test(name)) throw new Error(`"${name}" is not a variable name (letters, digits and _, not starting with a digit)`);
  if (value !== null && /[\r\n]/.test(value)) throw new Error(`the value of ${name} has a line break; a secret is one line`);
  const file = join(functionsDir, '.env');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const out: string[] = [];
  let found = false;
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(raw);
    if (m && !raw.trim().startsWith('#') && m[1] === name) {
      if (!found && value !== null) out.push(`${name}=${/^[^\s"'#]*$/.test(value) ? value : `"${value}"`}`);
      found = true;
      continue;
    }
    out.push(raw);
  }
  while (out.length && out[out.length - 1] === '') out.pop();
  if (!found && value !== null) out.push(`${name}=${/^[^\s"'#]*$/.test(value) ? value : `"${value}"`}`);
  if (value === null && !found) return false;
  mkdirSync(functionsDir, { recursive: true });
  writeFileSync(file, out.length ? `${out.join('\n')}\n` : '', { mode: 0o600 });
  return true;
}

/** How long an instance trusts its copy of the stored secrets (another instance's change shows within it). */
export const SECRETS_TTL_MS = 1000;

const keyOf = (secretKey: string) => Buffer.from(hkdfSync('sha256', secretKey, 'plinth', 'function-secrets', 32));

/**
 * A secret's value sealed for the database: AES-256-GCM under a key derived from the server's
 * secret key, the name bound in (a value moved to another name does not open).
 * @example seal('sk_…', 'PAY_KEY', 'pk_live_1') // 'v1.…'
 */
export function seal(secretKey: string, name: string, value: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  c.setAAD(Buffer.from(name));
  const ct = Buffer.concat([c.update(value, 'utf8'), c.final()]);
  return `v1.${iv.toString('base64url')}.${c.getAuthTag().toString('base64url')}.${ct.toString('base64url')}`;
}

/** The value of `seal`, or null when it does not open (another secret key, or changed). */
export function unseal(secretKey: string, name: string, sealed: string): string | null {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', keyOf(secretKey), Buffer.from(iv, 'base64url'));
    d.setAAD(Buffer.from(name));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export interface StoredSecrets {
  /** The stored secrets' values (cached SECRETS_TTL_MS); `sig` changes when any does. */
  current(): Promise<{ values: Record<string, string>; sig: string }>;
  names(): Promise<string[]>;
  set(name: string, value: string): Promise<void>;
  /** false when there was no such secret. */
  remove(name: string): Promise<boolean>;
}

/**
 * The secrets set through the admin API, in `plinth.function_secrets` (migration 0176), shared
 * by every instance; values never leave but into the functions' environment.
 * @example const stored = createStoredSecrets(db, clock, keys.secretKey, log);
 */
export function createStoredSecrets(db: Db, clock: Clock, secretKey: string, log: Logger): StoredSecrets {
  let cache: { at: number; values: Record<string, string>; sig: string } | null = null;
  let reading: Promise<{ values: Record<string, string>; sig: string }> | null = null;
  const warned = new Set<string>();
  return {
    async current() {
      if (cache && Date.now() - cache.at < SECRETS_TTL_MS) return cache;
      reading ??= (async () => {
        try {
          const { rows } = await db.query<{ name: string; sealed: string }>(
            'select name, sealed from plinth.function_secrets order by name',
          );
          const values: Record<string, string> = {};
          for (const r of rows) {
            const v = unseal(secretKey, r.name, r.sealed);
            if (v !== null) values[r.name] = v;
            else if (!warned.has(r.name)) {
              warned.add(r.name);
              log.warn(`function secret ${r.name} does not open with this server's secret key (was it changed?): set it again`);
            }
          }
          cache = { at: Date.now(), values, sig: rows.map((r) => `${r.name}:${r.sealed}`).join('\n') };
          return cache;
        } finally {
          reading = null;
        }
      })();
      return reading;
    },
    async names() {
      const { rows } = await db.query<{ name: string }>('select name from plinth.function_secrets order by name');
      return rows.map((r) => r.name);
    },
    async set(name, value) {
      if (!NAME.test(name)) throw new Error(`"${name}" is not a variable name (letters, digits and _, not starting with a digit)`);
      await db.query(
        `insert into plinth.function_secrets (name, sealed, updated_at) values ($1, $2, to_timestamp($3::float8 / 1000))
         on conflict (name) do update set sealed = excluded.sealed, updated_at = excluded.updated_at`,
        [name, seal(secretKey, name, value), clock.now()],
      );
      cache = null;
    },
    async remove(name) {
      const { rows } = await db.query('delete from plinth.function_secrets where name = $1 returning name', [name]);
      cache = null;
      return rows.length > 0;
    },
  };
}
