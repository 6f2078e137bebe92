import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CronError, parseCron } from '../lib/index.js';
import { ConfigError, type Env } from './parse.js';
import { parseSupabaseConfig, projectSettingsOf, SUPABASE_CONFIG, type SupabaseSettings, servableSchema } from './supabase.js';

/**
 * A Plinth project on disk: the folder holding `plinth.json`, found from any folder below it
 * as git finds `.git`. The file keeps what a project needs to be found again, never a secret:
 * the embedded database's folder, the port, and the NAME of the variable that holds a
 * PostgreSQL URL (the URL itself stays in the environment or the project's `.env`).
 */
export const PROJECT_FILE = 'plinth.json';

export interface ProjectSettings {
  /** The embedded database and its files, relative to the project folder. */
  data_dir: string;
  /** The HTTP port (PORT and --port win). */
  port: number;
  /** The variable holding a PostgreSQL URL; when it is set, it is used instead of `data_dir`. */
  database_url_env: string;
  /** The app's SQL migrations (`plinth migrate`, `plinth dev`, `plinth start --migrate`). */
  migrations_dir: string;
  /**
   * Auth settings the file manages (the keys of `PATCH /api/v1/settings/auth`), applied at every
   * start with the API's own validation; secrets only as `"env(NAME)"`.
   */
  auth?: Record<string, unknown>;
  /** Buckets the file manages, by name: created or updated at start, never deleted. */
  storage?: { buckets: Record<string, ProjectBucket> };
  /** Tables of `public` whose changes realtime captures: switched on at every start, never off by the file. */
  realtime?: { tables: string[] };
  /** Seed files (relative to the project folder) run after the migrations on a fresh database; default `seed.sql` when present. */
  db?: { seed?: string[] };
  /** Per function: `schedule`, a cron expression (UTC) it runs on (functions/schedules.ts). */
  functions?: Record<string, { schedule?: string }>;
  /** Database webhooks by name (the fields of POST /api/v1/webhooks but `name`); header values only as `"env(NAME)"`. */
  webhooks?: Record<string, Record<string, unknown>>;
  /**
   * The schemas `/rest/v1` serves (PostgREST's `db-schemas`; `Accept-Profile`), the default first;
   * `["public"]` when absent. Plinth's own schemas are never served (INTERNAL_SCHEMAS).
   */
  api?: { schemas: string[] };
}

export interface ProjectBucket {
  public?: boolean;
  file_size_limit?: number | null;
  allowed_mime_types?: string[] | null;
}

/** The auth keys holding secrets: in plinth.json only as `"env(NAME)"` (or null). */
const ENV_REF = /^env\(([A-Za-z_][A-Za-z0-9_]*)\)$/;
const BUCKET_FIELDS = ['public', 'file_size_limit', 'allowed_mime_types'];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each secret of an `auth` section with its key: providers' client_secret and private_key, oidc_providers' client_secret, the send hooks' secrets. */
export function authSecrets(auth: Record<string, unknown>): Array<{ key: string; value: unknown; set: (v: string) => void }> {
  const out: Array<{ key: string; value: unknown; set: (v: string) => void }> = [];
  if (isObject(auth.providers))
    for (const [name, p] of Object.entries(auth.providers))
      if (isObject(p))
        for (const f of ['client_secret', 'private_key'])
          if (f in p) out.push({ key: `auth.providers.${name}.${f}`, value: p[f], set: (v) => (p[f] = v) });
  if (Array.isArray(auth.oidc_providers))
    auth.oidc_providers.forEach((p, i) => {
      if (isObject(p) && 'client_secret' in p)
        out.push({ key: `auth.oidc_providers[${i}].client_secret`, value: p.client_secret, set: (v) => (p.client_secret = v) });
    });
  // The send hooks' signing secrets (docs/auth.md, "Send email, send SMS").
  const hooks = auth.hooks;
  if (isObject(hooks))
    for (const f of ['send_email_secrets', 'send_sms_secrets'])
      if (f in hooks) out.push({ key: `auth.hooks.${f}`, value: hooks[f], set: (v) => (hooks[f] = v) });
  return out;
}

/**
 * The `auth` section with every `"env(NAME)"` replaced by the variable's value: a missing
 * variable is one `config:` line naming it.
 * @example resolveAuthSecrets({ providers: { github: { client_secret: 'env(GH)' } } }, { GH: 's' }, 'plinth.json')
 */
export function resolveAuthSecrets(
  auth: Record<string, unknown>,
  env: Record<string, string | undefined>,
  file: string,
): Record<string, unknown> {
  const out = structuredClone(auth);
  for (const s of authSecrets(out)) {
    const m = typeof s.value === 'string' ? ENV_REF.exec(s.value) : null;
    if (!m) continue;
    const v = env[m[1]];
    if (v === undefined || v === '')
      throw new ConfigError(
        `${file}: ${s.key} reads the variable ${m[1]}, which is not set; set it in the environment or the project's .env`,
      );
    s.set(v);
  }
  return out;
}

/**
 * The webhooks of plinth.json with their header values read from `env` (they may carry
 * credentials, so the file holds only `"env(NAME)"`).
 * @example resolveWebhookHeaders({ orders: { headers: { Authorization: 'env(HOOK_TOKEN)' } } }, process.env, file)
 */
export function resolveWebhookHeaders(
  webhooks: Record<string, Record<string, unknown>>,
  env: Record<string, string | undefined>,
  file: string,
): Record<string, Record<string, unknown>> {
  const out = structuredClone(webhooks);
  for (const [name, w] of Object.entries(out)) {
    if (!isObject(w.headers)) continue;
    for (const [h, v] of Object.entries(w.headers)) {
      const m = ENV_REF.exec(String(v));
      const value = m ? env[m[1]] : undefined;
      if (!m || value === undefined || value === '')
        throw new ConfigError(
          `${file}: webhooks.${name}.headers.${h} reads the variable ${m?.[1]}, which is not set; set it in the environment or the project's .env`,
        );
      w.headers[h] = value;
    }
  }
  return out;
}

const WEBHOOK_FIELDS = ['table', 'events', 'url', 'filter', 'headers', 'enabled'];
function parseWebhooks(value: unknown, file: string): Record<string, Record<string, unknown>> {
  if (!isObject(value))
    throw new ConfigError(`${file}: "webhooks" must be {"<name>": {"table", "url", "events", "filter", "headers", "enabled"}}`);
  for (const [name, w] of Object.entries(value)) {
    const bad = (what: string) => new ConfigError(`${file}: webhooks.${name}${what}`);
    if (!name.trim() || name.length > 100) throw bad(' is not a webhook name (1–100 characters)');
    if (!isObject(w)) throw bad(' must be an object with table, url, events, filter, headers, enabled');
    for (const k of Object.keys(w))
      if (!WEBHOOK_FIELDS.includes(k)) throw bad(`.${k} is not a webhook field (${WEBHOOK_FIELDS.join(', ')})`);
    if (typeof w.table !== 'string' || typeof w.url !== 'string') throw bad(' needs "table" and "url"');
    if (w.headers !== undefined) {
      if (!isObject(w.headers)) throw bad('.headers must be an object of header names and "env(NAME)" values');
      for (const [h, v] of Object.entries(w.headers))
        if (!(typeof v === 'string' && ENV_REF.test(v)))
          throw bad(
            `.headers.${h} must not hold its value itself; write "env(NAME)" and set NAME in the environment or the project's .env`,
          );
    }
  }
  return value as Record<string, Record<string, unknown>>;
}

function parseAuth(value: unknown, file: string): Record<string, unknown> {
  if (!isObject(value))
    throw new ConfigError(`${file}: "auth" must be an object of auth settings (the keys of PATCH /api/v1/settings/auth)`);
  for (const s of authSecrets(value))
    if (s.value !== null && !(typeof s.value === 'string' && ENV_REF.test(s.value)))
      throw new ConfigError(
        `${file}: ${s.key} must not hold the secret itself; write "env(NAME)" and set NAME in the environment or the project's .env`,
      );
  return value;
}

function parseStorage(value: unknown, file: string): { buckets: Record<string, ProjectBucket> } {
  if (!isObject(value) || Object.keys(value).some((k) => k !== 'buckets') || !isObject(value.buckets ?? {}))
    throw new ConfigError(`${file}: "storage" must be {"buckets": {"<name>": {"public", "file_size_limit", "allowed_mime_types"}}}`);
  const buckets = (value.buckets ?? {}) as Record<string, unknown>;
  for (const [name, b] of Object.entries(buckets)) {
    const bad = (what: string) => new ConfigError(`${file}: storage.buckets.${name}${what}`);
    if (!isObject(b)) throw bad(' must be an object with public, file_size_limit, allowed_mime_types');
    for (const [k, v] of Object.entries(b)) {
      if (!BUCKET_FIELDS.includes(k)) throw bad(`.${k} is not a bucket setting (${BUCKET_FIELDS.join(', ')})`);
      if (k === 'public' && typeof v !== 'boolean') throw bad('.public must be true or false');
      if (k === 'file_size_limit' && v !== null && !(typeof v === 'number' && Number.isInteger(v) && v > 0))
        throw bad('.file_size_limit must be a number of bytes or null');
      if (k === 'allowed_mime_types' && v !== null && !(Array.isArray(v) && v.every((t) => typeof t === 'string')))
        throw bad('.allowed_mime_types must be a list of media types (image/png, image/*) or null');
    }
  }
  return { buckets: buckets as Record<string, ProjectBucket> };
}

function parseRealtime(value: unknown, file: string): { tables: string[] } {
  const tables = isObject(value) && Object.keys(value).every((k) => k === 'tables') ? (value.tables ?? []) : null;
  if (!Array.isArray(tables) || !tables.every((t) => typeof t === 'string' && t.trim()))
    throw new ConfigError(`${file}: "realtime" must be {"tables": ["<table of public>", …]}`);
  return { tables: [...new Set(tables as string[])] };
}

function parseFunctions(value: unknown, file: string): Record<string, { schedule?: string }> {
  if (!isObject(value)) throw new ConfigError(`${file}: "functions" must be {"<function name>": {"schedule": "*/5 * * * *"}}`);
  for (const [name, f] of Object.entries(value)) {
    const bad = (what: string) => new ConfigError(`${file}: functions.${name}${what}`);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw bad(' is not a function name (letters, digits, - and _)');
    if (!isObject(f)) throw bad(' must be an object such as {"schedule": "0 3 * * *"}');
    for (const [k, v] of Object.entries(f)) {
      if (k !== 'schedule') throw bad(`.${k} is not a function setting (schedule)`);
      if (typeof v !== 'string') throw bad('.schedule must be a cron expression such as "*/5 * * * *"');
      try {
        parseCron(v);
      } catch (err) {
        if (err instanceof CronError) throw bad(`.schedule: ${err.message}`);
        throw err;
      }
    }
  }
  return value as Record<string, { schedule?: string }>;
}

function parseApi(value: unknown, file: string): { schemas: string[] } {
  const schemas = isObject(value) && Object.keys(value).every((k) => k === 'schemas') ? value.schemas : null;
  if (!Array.isArray(schemas) || schemas.length === 0 || !schemas.every((t) => typeof t === 'string' && t.trim()))
    throw new ConfigError(`${file}: "api" must be {"schemas": ["public", "<another schema>", …]}`);
  const own = (schemas as string[]).find((n) => !servableSchema(n));
  if (own !== undefined)
    throw new ConfigError(`${file}: api.schemas names "${own}", which holds Plinth's or PostgreSQL's own tables; remove it`);
  return { schemas: [...new Set(schemas as string[])] };
}

function parseDb(value: unknown, file: string): { seed?: string[] } {
  if (!isObject(value) || Object.keys(value).some((k) => k !== 'seed'))
    throw new ConfigError(`${file}: "db" must be {"seed": ["seed.sql", …]}`);
  if (value.seed !== undefined && !(Array.isArray(value.seed) && value.seed.every((f) => typeof f === 'string' && f.trim())))
    throw new ConfigError(`${file}: "db.seed" must be a list of SQL file paths, relative to the project folder`);
  return value.seed === undefined ? {} : { seed: value.seed as string[] };
}

export interface Project {
  /** The folder holding plinth.json (or the `supabase/` folder of a Supabase CLI project). */
  root: string;
  /** The path of plinth.json (or of `supabase/config.toml`). */
  file: string;
  settings: ProjectSettings;
  /**
   * A Supabase CLI project folder (`supabase/config.toml`, no plinth.json): its typed settings
   * (config/supabase.ts) and the lines naming what Plinth keeps its own way.
   */
  supabase?: { settings: SupabaseSettings; notes: string[] };
}

export const DEFAULT_PROJECT: ProjectSettings = {
  data_dir: 'data',
  port: 8080,
  database_url_env: 'DATABASE_URL',
  migrations_dir: 'migrations',
};

/** Every top-level key the parser knows (the JSON Schema names each: plinth.schema.json). */
export const PROJECT_KEYS = [
  '$schema',
  'name',
  ...Object.keys(DEFAULT_PROJECT),
  'auth',
  'storage',
  'realtime',
  'db',
  'functions',
  'webhooks',
  'api',
];

/** What `"$schema"` points at in the files `plinth init` writes (the schema ships in the npm package). */
export const PROJECT_SCHEMA_REF = './node_modules/plinth/plinth.schema.json';

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads and checks a plinth.json: missing keys take their defaults, an unknown key or a wrong
 * value is one `config:` line naming the file and the key.
 * @example parseProjectFile('{"data_dir":"db"}', '/app/plinth.json') // { data_dir: 'db', port: 8080, … }
 */
export function parseProjectFile(text: string, file: string): ProjectSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON (${(err as Error).message}); fix it or remove it and run plinth init`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`${file} must hold a JSON object`);
  const out: ProjectSettings = { ...DEFAULT_PROJECT };
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const bad = (what: string) => new ConfigError(`${file}: "${key}" must be ${what}`);
    switch (key) {
      case 'data_dir':
      case 'migrations_dir':
        if (typeof value !== 'string' || !value.trim()) throw bad('a folder path');
        out[key] = value;
        break;
      case 'port':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) throw bad('a port number (0–65535)');
        out.port = value;
        break;
      case 'database_url_env':
        if (typeof value !== 'string' || !VARIABLE.test(value)) throw bad('the name of an environment variable, e.g. "DATABASE_URL"');
        out.database_url_env = value;
        break;
      case 'auth':
        out.auth = parseAuth(value, file);
        break;
      case 'storage':
        out.storage = parseStorage(value, file);
        break;
      case 'realtime':
        out.realtime = parseRealtime(value, file);
        break;
      case 'api':
        out.api = parseApi(value, file);
        break;
      case 'db':
        out.db = parseDb(value, file);
        break;
      case 'functions':
        out.functions = parseFunctions(value, file);
        break;
      case 'webhooks':
        out.webhooks = parseWebhooks(value, file);
        break;
      case '$schema':
      case 'name':
        break;
      default:
        throw new ConfigError(`${file}: unknown key "${key}"; it takes ${PROJECT_KEYS.join(', ')}`);
    }
  }
  return out;
}

/**
 * The variables a Supabase folder's `env(NAME)` reads, as the Supabase CLI does: the environment
 * over `supabase/.env` over the project's `.env`.
 */
function supabaseEnv(root: string, env: Env): Env {
  const read = (f: string) => (existsSync(f) ? parseEnvFile(readFileSync(f, 'utf8')) : {});
  return { ...read(join(root, '.env')), ...read(join(root, 'supabase', '.env')), ...env };
}

/** `KEY=value` lines (the same reading as config/index.ts parseDotenv, which imports this file). */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw);
    if (!m || raw.trim().startsWith('#')) continue;
    const v = m[2];
    out[m[1]] = (v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")) ? v.slice(1, -1) : v;
  }
  return out;
}

/**
 * The Supabase CLI project folder `root` is, read from its `supabase/config.toml`.
 * @example supabaseProject('/home/ada/app') // { root, file: '…/supabase/config.toml', settings, supabase }
 */
export function supabaseProject(root: string, env: Env = process.env): Project {
  const file = join(root, SUPABASE_CONFIG);
  const settings = parseSupabaseConfig(readFileSync(file, 'utf8'), file, join(root, 'supabase'), supabaseEnv(root, env));
  const mapped = projectSettingsOf(settings);
  return { root, file, settings: mapped.settings, supabase: { settings, notes: mapped.notes } };
}

/**
 * The project `from` is in: the nearest folder from `from` upwards that holds plinth.json, or
 * else `supabase/config.toml` (a Supabase CLI project folder; plinth.json wins in one folder).
 * @example findProject('/home/ada/app/src') // { root: '/home/ada/app', file: '/home/ada/app/plinth.json', settings }
 */
export function findProject(from: string, env: Env = process.env): Project | null {
  let dir = resolve(from);
  for (;;) {
    const file = join(dir, PROJECT_FILE);
    if (existsSync(file)) return { root: dir, file, settings: parseProjectFile(readFileSync(file, 'utf8'), file) };
    if (existsSync(join(dir, SUPABASE_CONFIG))) return supabaseProject(dir, env);
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The text `plinth init` writes: every key, so the file says what can be set.
 * @example projectFileText({ ...DEFAULT_PROJECT, port: 3001 })
 */
export function projectFileText(settings: ProjectSettings): string {
  return `${JSON.stringify({ $schema: PROJECT_SCHEMA_REF, ...settings }, null, 2)}\n`;
}
