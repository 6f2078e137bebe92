/**
 * A function's secrets: what its worker gets as its whole environment (`process.env`,
 * `Deno.env`, `ctx.secrets`). The server's own environment is never handed over: the variables
 * come from files of the project, read again when the functions are reloaded:
 * - the functions folder's `.env` (`functions/.env`, or `supabase/functions/.env` as the
 *   Supabase CLI reads it), all of it;
 * - the project's `.env`, minus the variables the server itself reads (its keys, database URL,
 *   SMTP, SMS, S3 and OAuth credentials, its tuning): SERVER_VARIABLE below.
 */
import { existsSync, readFileSync } from 'node:fs';
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
