/**
 * One parser per kind of value the environment holds. Every wrong value is a `ConfigError`:
 * one line, `config: …`, naming the variable and what it takes, never echoing a secret.
 */

export type Env = Record<string, string | undefined>;

/**
 * A wrong configuration value: the start stops with this one line (`config: …`), naming the
 * variable and what it takes. Never carries a secret value.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(`config: ${message}`);
    this.name = 'ConfigError';
  }
}

/** A limit of `max` events per `windowSeconds` (fixed window). */
export interface RateRule {
  max: number;
  windowSeconds: number;
}

/**
 * An integer variable (`fallback` when unset or empty), at least `min` (0) and at most `max`.
 * @example int({ PORT: '3000' }, 'PORT', 8080, { max: 65535 }) // 3000
 */
export function int(env: Env, name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
  const value = env[name];
  if (value === undefined || value.trim() === '') return fallback;
  const min = bounds.min ?? 0;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
    throw new ConfigError(`${name} must be ${min === 0 ? 'a non-negative integer' : `an integer ≥ ${min}`}, got "${value}"`);
  }
  if (bounds.max !== undefined && n > bounds.max) throw new ConfigError(`${name} must be at most ${bounds.max}, got "${value}"`);
  return n;
}

/**
 * A rate rule written `max/windowSeconds`.
 * @example rule({ AUTH_RATE_SIGNIN_EMAIL: '5/900' }, 'AUTH_RATE_SIGNIN_EMAIL', { max: 10, windowSeconds: 900 }) // { max: 5, windowSeconds: 900 }
 */
export function rule(env: Env, name: string, fallback: RateRule): RateRule {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  if (!m || Number(m[2]) === 0) throw new ConfigError(`${name} must look like "max/windowSeconds", got "${value}"`);
  return { max: Number(m[1]), windowSeconds: Number(m[2]) };
}

/** A trimmed string, or undefined when unset or empty. */
export function optional(env: Env, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/**
 * An http(s) URL, or undefined when unset. `user:password@` is refused (fetch refuses it, and it
 * would put a credential where URLs get logged); a base URL (`base: true`) takes no query or
 * fragment, as paths are appended to it, and loses trailing slashes.
 * @example httpUrl({ X: 'http://127.0.0.1:9000/' }, 'X', { base: true }) // 'http://127.0.0.1:9000'
 */
export function httpUrl(env: Env, name: string, options: { base?: boolean } = {}): string | undefined {
  const value = optional(env, name);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL (expected http:// or https://…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http(s) URL (http://… or https://…)`);
  if (url.username || url.password) throw new ConfigError(`${name} must not contain user:password@`);
  if (options.base && (url.search || url.hash)) throw new ConfigError(`${name} must not have a query or fragment`);
  return options.base ? value.replace(/\/+$/, '') : value;
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * A size in bytes: a plain integer, or a number with a unit (`50MiB`, `1.5GB`, `512 KiB`).
 * @example size({ STORAGE_MAX_FILE_SIZE: '50MiB' }, 'STORAGE_MAX_FILE_SIZE', 1) // 52428800
 */
export function size(env: Env, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value.trim() === '') return fallback;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError(`${name} must be a size in bytes such as 52428800 or 50MiB, got "${value}"`);
  return n;
}

/**
 * A yes/no variable: true/1/yes or false/0/no.
 * @example bool({ S3_FORCE_PATH_STYLE: 'true' }, 'S3_FORCE_PATH_STYLE', false) // true
 */
export function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return fallback;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}
