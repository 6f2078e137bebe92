/**
 * A Supabase CLI project folder (`supabase/config.toml`, `supabase/migrations`, the seeds),
 * served by `plinth start` as `supabase start` would (docs/supabase.md "Project folders").
 * The file is read into typed settings; what Plinth has a setting for is mapped onto it (the
 * project's ProjectSettings), the rest is kept for the Supabase faces, and the sections Plinth
 * does not act on are named in one start line. Unknown keys are never a failure (Supabase's
 * file has many); a known key of the wrong type is one `config:` line naming it and the fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ConfigError } from './parse.js';
import type { ProjectBucket, ProjectSettings } from './project.js';

/** Schemas holding Plinth's own tables and functions (or PostgreSQL's): never served as an API profile. */
export const INTERNAL_SCHEMAS = ['auth', 'storage', 'realtime', 'plinth', 'extensions', 'information_schema'];

/** Whether a schema may be served by `/rest/v1`: not Plinth's, not PostgreSQL's (`pg_*`). */
export const servableSchema = (name: string) => !INTERNAL_SCHEMAS.includes(name) && !name.startsWith('pg_') && name.length <= 63;

/** Where the file lies below the project folder. */
export const SUPABASE_CONFIG = join('supabase', 'config.toml');

/**
 * The JWT secret of every local Supabase stack when `[auth] jwt_secret` is not set (the Supabase
 * CLI's documented default): the anon and service_role keys below are signed with it.
 */
export const SUPABASE_LOCAL_JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface SupabaseBucket extends ProjectBucket {
  /** `objects_path`: a folder of files to upload (not acted on: named in the start line). */
  objects_path?: string;
}

export interface SupabaseExternalProvider {
  enabled: boolean;
  client_id: string | null;
  /** `secret`, with `env(NAME)` resolved (null when the variable is not set). */
  secret: string | null;
  redirect_uri: string | null;
  skip_nonce_check: boolean;
}

export interface SupabaseSettings {
  project_id: string | null;
  api: { enabled: boolean; port: number; schemas: string[]; extra_search_path: string[]; max_rows: number };
  db: {
    migrations: { enabled: boolean };
    /** `[db.seed]`: `sql_paths` relative to the `supabase/` folder (globs are not expanded). */
    seed: { enabled: boolean; sql_paths: string[] };
  };
  auth: {
    enabled: boolean;
    site_url: string;
    additional_redirect_urls: string[];
    jwt_expiry: number;
    /** `[auth] jwt_secret`, else SUPABASE_LOCAL_JWT_SECRET. */
    jwt_secret: string;
    /** `signing_keys_path` resolved to an absolute path (relative to `supabase/`), or null. */
    signing_keys_path: string | null;
    enable_signup: boolean;
    enable_anonymous_sign_ins: boolean;
    enable_manual_linking: boolean;
    minimum_password_length: number;
    email: {
      enable_signup: boolean;
      enable_confirmations: boolean;
      double_confirm_changes: boolean;
      otp_length: number;
      otp_expiry: number;
    };
    sms: { enable_signup: boolean; enable_confirmations: boolean; test_otp: Record<string, string> };
    external: Record<string, SupabaseExternalProvider>;
    mfa: { totp_enroll_enabled: boolean; totp_verify_enabled: boolean; max_enrolled_factors: number };
    passkey: { enabled: boolean; rp_id: string | null; rp_origins: string[] };
    /** `[auth.hook.<name>] enabled, uri, secrets`: the enabled hooks Plinth runs (custom_access_token, before_user_created, send_email, send_sms). */
    hook: Record<'custom_access_token' | 'before_user_created' | 'send_email' | 'send_sms', string | null> & {
      send_email_secrets?: string | null;
      send_sms_secrets?: string | null;
    };
  };
  storage: {
    enabled: boolean;
    file_size_limit: number | null;
    buckets: Record<string, SupabaseBucket>;
    /** `[storage.image_transformation] enabled` (default true): false turns transforms off. */
    image_transformation: boolean;
  };
  realtime: { enabled: boolean };
  functions: Record<string, { enabled: boolean; verify_jwt: boolean }>;
  /** The sections and keys of the file Plinth does not act on, for the start line. */
  notActedOn: string[];
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const ENV_REF = /^env\(([A-Za-z_][A-Za-z0-9_]*)\)$/;
const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1000, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** Reads typed values out of one table, naming `section.key` in every mistake. */
class Reader {
  constructor(
    private readonly file: string,
    private readonly env: Record<string, string | undefined>,
  ) {}

  bad(key: string, what: string): ConfigError {
    return new ConfigError(`${this.file}: ${key} must be ${what}`);
  }

  /** A string with `env(NAME)` resolved as the Supabase CLI does: an unset variable gives null. */
  resolve(v: string): string | null {
    const m = ENV_REF.exec(v.trim());
    if (!m) return v;
    const value = this.env[m[1]];
    return value === undefined || value === '' ? null : value;
  }

  str(t: Table, section: string, key: string, fallback: string | null): string | null {
    const v = t[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'string') throw this.bad(`${section}.${key}`, `a string, e.g. ${key} = "…"`);
    return this.resolve(v);
  }

  bool(t: Table, section: string, key: string, fallback: boolean): boolean {
    const v = t[key];
    if (v === undefined) return fallback;
    if (typeof v === 'string' && ENV_REF.test(v.trim())) {
      const r = this.resolve(v);
      if (r === null) return fallback;
      if (r === 'true' || r === 'false') return r === 'true';
      throw this.bad(`${section}.${key}`, `true or false (${v} gives "${r}")`);
    }
    if (typeof v !== 'boolean') throw this.bad(`${section}.${key}`, `true or false, e.g. ${key} = true`);
    return v;
  }

  int(t: Table, section: string, key: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    let v = t[key];
    if (v === undefined) return fallback;
    if (typeof v === 'string' && ENV_REF.test(v.trim())) {
      const r = this.resolve(v);
      if (r === null) return fallback;
      v = /^\d+$/.test(r) ? Number(r) : r;
    }
    if (typeof v === 'bigint') v = Number(v);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw this.bad(`${section}.${key}`, `a whole number from ${min} to ${max}, e.g. ${key} = ${fallback}`);
    return v;
  }

  strings(t: Table, section: string, key: string, fallback: string[]): string[] {
    const v = t[key];
    if (v === undefined) return fallback;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
      throw this.bad(`${section}.${key}`, `a list of strings, e.g. ${key} = ["…"]`);
    return v.map((x) => this.resolve(x)).filter((x): x is string => x !== null);
  }

  table(t: Table, section: string, key: string): Table {
    const v = t[key];
    if (v === undefined) return {};
    if (!isTable(v)) throw this.bad(`${section}.${key}`, `a table ([${section}.${key}])`);
    return v;
  }

  /** A size: a number of bytes or a string such as "50MiB" (Supabase's form). */
  size(t: Table, section: string, key: string): number | null {
    const v = t[key];
    if (v === undefined) return null;
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
    const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v) : null;
    const unit = m ? SIZE_UNITS[m[2].toLowerCase()] : undefined;
    const n = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw this.bad(`${section}.${key}`, `a size such as "50MiB" or a number of bytes`);
    return n;
  }
}

/** Top-level sections Plinth reads (others are named in the start line when enabled). */
const ACTED_ON = new Set(['project_id', 'api', 'db', 'auth', 'storage', 'realtime', 'functions']);

/**
 * Parses the text of a `supabase/config.toml`. `supabaseDir` is the `supabase/` folder (paths in
 * the file are relative to it); `env` resolves `env(NAME)` values.
 * @example parseSupabaseConfig('[api]\nport = 54321', '/app/supabase/config.toml', '/app/supabase', {})
 */
export function parseSupabaseConfig(
  text: string,
  file: string,
  supabaseDir: string,
  env: Record<string, string | undefined> = {},
): SupabaseSettings {
  let raw: Table;
  try {
    raw = parseToml(text) as Table;
  } catch (err) {
    const first = String((err as Error).message).split('\n')[0];
    throw new ConfigError(`${file} is not valid TOML (${first}); fix it as \`supabase start\` would need`);
  }
  const r = new Reader(file, env);
  const notActedOn: string[] = [];
  const section = (key: string): Table => r.table(raw, '', key);
  const sub = (t: Table, name: string, key: string): Table => r.table(t, name, key);

  for (const [key, value] of Object.entries(raw))
    if (!ACTED_ON.has(key) && !(isTable(value) && value.enabled === false)) notActedOn.push(`[${key}]`);

  const api = section('api');
  const db = section('db');
  const seed = sub(db, 'db', 'seed');
  const migrations = sub(db, 'db', 'migrations');
  const auth = section('auth');
  const email = sub(auth, 'auth', 'email');
  const sms = sub(auth, 'auth', 'sms');
  const testOtp = sub(sms, 'auth.sms', 'test_otp');
  const mfa = sub(auth, 'auth', 'mfa');
  const totp = sub(mfa, 'auth.mfa', 'totp');
  const passkey = sub(auth, 'auth', 'passkey');
  const webauthn = sub(auth, 'auth', 'webauthn');
  const storage = section('storage');
  const realtime = section('realtime');

  const external: Record<string, SupabaseExternalProvider> = {};
  for (const [name, p] of Object.entries(sub(auth, 'auth', 'external'))) {
    if (!isTable(p)) throw r.bad(`auth.external.${name}`, 'a table ([auth.external.<provider>])');
    const at = `auth.external.${name}`;
    external[name] = {
      enabled: r.bool(p, at, 'enabled', false),
      client_id: r.str(p, at, 'client_id', null) || null,
      secret: r.str(p, at, 'secret', null) || null,
      redirect_uri: r.str(p, at, 'redirect_uri', null) || null,
      skip_nonce_check: r.bool(p, at, 'skip_nonce_check', false),
    };
  }

  const buckets: Record<string, SupabaseBucket> = {};
  for (const [name, b] of Object.entries(sub(storage, 'storage', 'buckets'))) {
    if (!isTable(b)) throw r.bad(`storage.buckets.${name}`, 'a table ([storage.buckets.<name>])');
    const at = `storage.buckets.${name}`;
    const bucket: SupabaseBucket = { public: r.bool(b, at, 'public', false) };
    const limit = r.size(b, at, 'file_size_limit');
    if (limit !== null) bucket.file_size_limit = limit;
    if (b.allowed_mime_types !== undefined) bucket.allowed_mime_types = r.strings(b, at, 'allowed_mime_types', []);
    const objects = r.str(b, at, 'objects_path', null);
    if (objects) {
      bucket.objects_path = objects;
      notActedOn.push(`${at}.objects_path`);
    }
    buckets[name] = bucket;
  }

  const hook: SupabaseSettings['auth']['hook'] = { custom_access_token: null, before_user_created: null, send_email: null, send_sms: null };
  for (const [name, h] of Object.entries(sub(auth, 'auth', 'hook'))) {
    if (!isTable(h)) throw r.bad(`auth.hook.${name}`, 'a table ([auth.hook.<name>])');
    const at = `auth.hook.${name}`;
    if (!r.bool(h, at, 'enabled', false)) continue;
    if (name === 'custom_access_token' || name === 'before_user_created') hook[name] = r.str(h, at, 'uri', null) || null;
    else if (name === 'send_email' || name === 'send_sms') {
      hook[name] = r.str(h, at, 'uri', null) || null;
      hook[`${name}_secrets`] = r.str(h, at, 'secrets', null) || null;
    } else notActedOn.push(at);
  }

  const functions: Record<string, { enabled: boolean; verify_jwt: boolean }> = {};
  for (const [name, f] of Object.entries(section('functions'))) {
    if (!isTable(f)) throw r.bad(`functions.${name}`, 'a table ([functions.<name>])');
    functions[name] = {
      enabled: r.bool(f, `functions.${name}`, 'enabled', true),
      verify_jwt: r.bool(f, `functions.${name}`, 'verify_jwt', true),
    };
  }

  const jwtSecret = r.str(auth, 'auth', 'jwt_secret', null);
  if (auth.jwt_secret !== undefined && jwtSecret === null)
    throw new ConfigError(
      `${file}: auth.jwt_secret reads ${String(auth.jwt_secret)}, which is not set; set the variable or remove the key`,
    );
  if (jwtSecret !== null && jwtSecret.length < 16) throw r.bad('auth.jwt_secret', 'at least 16 characters (Supabase asks for 32)');
  const signingKeys = r.str(auth, 'auth', 'signing_keys_path', null);
  const siteUrl = r.str(auth, 'auth', 'site_url', 'http://127.0.0.1:3000') ?? 'http://127.0.0.1:3000';

  return {
    project_id: r.str(raw, '', 'project_id', null),
    api: {
      enabled: r.bool(api, 'api', 'enabled', true),
      port: r.int(api, 'api', 'port', 54321, 0, 65535),
      schemas: r.strings(api, 'api', 'schemas', ['public', 'graphql_public']),
      extra_search_path: r.strings(api, 'api', 'extra_search_path', ['public', 'extensions']),
      max_rows: r.int(api, 'api', 'max_rows', 1000, 1),
    },
    db: {
      migrations: { enabled: r.bool(migrations, 'db.migrations', 'enabled', true) },
      seed: { enabled: r.bool(seed, 'db.seed', 'enabled', true), sql_paths: r.strings(seed, 'db.seed', 'sql_paths', ['./seed.sql']) },
    },
    auth: {
      enabled: r.bool(auth, 'auth', 'enabled', true),
      site_url: siteUrl,
      additional_redirect_urls: r.strings(auth, 'auth', 'additional_redirect_urls', []),
      jwt_expiry: r.int(auth, 'auth', 'jwt_expiry', 3600, 1, 604800),
      jwt_secret: jwtSecret ?? SUPABASE_LOCAL_JWT_SECRET,
      signing_keys_path: signingKeys ? join(supabaseDir, signingKeys) : null,
      enable_signup: r.bool(auth, 'auth', 'enable_signup', true),
      enable_anonymous_sign_ins: r.bool(auth, 'auth', 'enable_anonymous_sign_ins', false),
      enable_manual_linking: r.bool(auth, 'auth', 'enable_manual_linking', false),
      minimum_password_length: r.int(auth, 'auth', 'minimum_password_length', 6, 1, 128),
      email: {
        enable_signup: r.bool(email, 'auth.email', 'enable_signup', true),
        enable_confirmations: r.bool(email, 'auth.email', 'enable_confirmations', false),
        double_confirm_changes: r.bool(email, 'auth.email', 'double_confirm_changes', true),
        otp_length: r.int(email, 'auth.email', 'otp_length', 6, 6, 10),
        otp_expiry: r.int(email, 'auth.email', 'otp_expiry', 3600, 1, 86400),
      },
      sms: {
        enable_signup: r.bool(sms, 'auth.sms', 'enable_signup', false),
        enable_confirmations: r.bool(sms, 'auth.sms', 'enable_confirmations', false),
        test_otp: Object.fromEntries(Object.keys(testOtp).map((phone) => [phone, r.str(testOtp, 'auth.sms.test_otp', phone, '') ?? ''])),
      },
      external,
      mfa: {
        totp_enroll_enabled: r.bool(totp, 'auth.mfa.totp', 'enroll_enabled', false),
        totp_verify_enabled: r.bool(totp, 'auth.mfa.totp', 'verify_enabled', false),
        max_enrolled_factors: r.int(mfa, 'auth.mfa', 'max_enrolled_factors', 10, 0),
      },
      passkey: {
        enabled: r.bool(passkey, 'auth.passkey', 'enabled', false),
        rp_id: r.str(webauthn, 'auth.webauthn', 'rp_id', null) || null,
        rp_origins: r.strings(webauthn, 'auth.webauthn', 'rp_origins', []),
      },
      hook,
    },
    storage: {
      enabled: r.bool(storage, 'storage', 'enabled', true),
      file_size_limit: r.size(storage, 'storage', 'file_size_limit'),
      buckets,
      image_transformation: r.bool(sub(storage, 'storage', 'image_transformation'), 'storage.image_transformation', 'enabled', true),
    },
    realtime: { enabled: r.bool(realtime, 'realtime', 'enabled', true) },
    functions,
    notActedOn,
  };
}

/**
 * Plinth's own project settings for a Supabase folder: the embedded database in
 * `supabase/.plinth`, the `[api] port`, `supabase/migrations`, the seeds, the `[auth]` keys
 * Plinth has a setting for (the rest stay in SupabaseSettings for the faces) and the buckets.
 * Where a value is outside what Plinth allows, Plinth keeps its own and says so in `notes`.
 * @example projectSettingsOf(parseSupabaseConfig(text, file, dir)).settings.port // 54321
 */
export function projectSettingsOf(s: SupabaseSettings): { settings: ProjectSettings; notes: string[] } {
  const notes: string[] = [];
  const auth: Record<string, unknown> = {};
  const a = s.auth;
  const redirects = [a.site_url, ...a.additional_redirect_urls].filter((u) => /^https?:\/\/[^\s]+$/.test(u));
  auth.allowed_redirect_urls = [...new Set(redirects)];
  if (a.jwt_expiry >= 3600) auth.session_duration_seconds = Math.min(a.jwt_expiry, 2_592_000);
  else notes.push(`auth.jwt_expiry = ${a.jwt_expiry}: Plinth's access tokens live at least 3600 s`);
  if (a.minimum_password_length < 8)
    notes.push(`auth.minimum_password_length = ${a.minimum_password_length}: Plinth asks for at least 8 characters`);
  else auth.min_password_length = a.minimum_password_length;
  if (a.email.enable_confirmations)
    notes.push(
      'auth.email.enable_confirmations: Plinth confirms addresses when email_verification_url is set (PATCH /api/v1/settings/auth)',
    );
  auth.mfa_totp_enabled = a.mfa.totp_enroll_enabled || a.mfa.totp_verify_enabled;
  // Supabase's email provider signs in by password and by link alike; the link lands on the
  // site (site_url), where supabase-js takes the session from it.
  if (a.email.enable_signup && redirects.includes(a.site_url)) {
    auth.magic_link_enabled = true;
    auth.magic_link_url = a.site_url;
  } else auth.magic_link_enabled = false;
  auth.anonymous_sign_in_enabled = a.enable_anonymous_sign_ins;
  // Supabase's pg-functions:// hooks run here as SQL functions; an http(s) hook only for sending email and SMS.
  const hooks: Record<string, string | null> = { custom_access_token: null, before_user_created: null };
  for (const [name, uri] of Object.entries(a.hook)) {
    if (name.endsWith('_secrets')) continue;
    const send = name === 'send_email' || name === 'send_sms';
    if (uri?.startsWith('pg-functions://')) hooks[name] = uri;
    else if (send && uri && /^https?:\/\//.test(uri)) {
      // An HTTP send hook, signed with its secrets (Standard Webhooks, as Supabase signs it).
      hooks[name] = uri;
      hooks[`${name}_secrets`] = a.hook[`${name}_secrets` as 'send_email_secrets'] ?? null;
    } else if (uri) notes.push(`auth.hook.${name}: only pg-functions:// hooks run on Plinth (${uri.split('://')[0]} is not served)`);
  }
  auth.hooks = hooks;
  if (a.passkey.enabled && a.passkey.rp_id) {
    auth.passkey_enabled = true;
    auth.passkey_rp_id = a.passkey.rp_id;
    auth.passkey_origins = a.passkey.rp_origins;
  }
  const external = Object.entries(a.external).filter(([, p]) => p.enabled);
  if (external.length) notes.push(`auth.external (${external.map(([n]) => n).join(', ')}): set providers with PATCH /api/v1/settings/auth`);
  // [api] schemas: served as `/rest/v1` profiles, but never Plinth's own (auth, storage…).
  const schemas = s.api.schemas.filter(servableSchema);
  for (const name of s.api.schemas.filter((n) => !servableSchema(n)))
    notes.push(`api.schemas: "${name}" holds Plinth's own tables and is not served by /rest/v1`);
  const buckets: Record<string, ProjectBucket> = {};
  for (const [name, b] of Object.entries(s.storage.buckets)) {
    const { objects_path: _ignored, ...fields } = b;
    buckets[name] = fields;
  }
  return {
    settings: {
      data_dir: join('supabase', '.plinth'),
      port: s.api.port,
      database_url_env: 'DATABASE_URL',
      migrations_dir: join('supabase', 'migrations'),
      auth,
      ...(Object.keys(buckets).length ? { storage: { buckets } } : {}),
      ...(schemas.length ? { api: { schemas } } : {}),
      db: { seed: s.db.seed.enabled ? s.db.seed.sql_paths.map((p) => join('supabase', p)) : [] },
    },
    notes,
  };
}

/**
 * Reads `<root>/supabase/config.toml` when there is one.
 * @example readSupabaseFolder('/app', process.env) // { file, settings } or null
 */
export function readSupabaseFolder(
  root: string,
  env: Record<string, string | undefined> = process.env,
): { file: string; settings: SupabaseSettings } | null {
  const file = join(root, SUPABASE_CONFIG);
  if (!existsSync(file)) return null;
  return { file, settings: parseSupabaseConfig(readFileSync(file, 'utf8'), file, join(root, 'supabase'), env) };
}
