/**
 * A function's secrets: what its worker gets as its whole environment (`process.env`,
 * `Deno.env`, `ctx.secrets`). The server's own environment is never handed over: the variables
 * come from files of the project, read again when the functions are reloaded:
 * - the functions folder's `.env` (`functions/.env`, or `supabase/functions/.env` as the
 *   Supabase CLI reads it), all of it;
 * - the project's `.env`, minus the variables the server itself reads (its keys, database URL,
 *   SMTP, SMS, S3 and OAuth credentials, its tuning): SERVER_VARIABLE below.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDotenv } from '../config/index.js';

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

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
