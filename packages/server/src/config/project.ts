import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from './parse.js';

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
}

export interface Project {
  /** The folder holding plinth.json. */
  root: string;
  /** The path of plinth.json. */
  file: string;
  settings: ProjectSettings;
}

export const DEFAULT_PROJECT: ProjectSettings = {
  data_dir: 'data',
  port: 8080,
  database_url_env: 'DATABASE_URL',
  migrations_dir: 'migrations',
};

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
      case '$schema':
      case 'name':
        break;
      default:
        throw new ConfigError(`${file}: unknown key "${key}"; it takes ${Object.keys(DEFAULT_PROJECT).join(', ')}`);
    }
  }
  return out;
}

/**
 * The project `from` is in: the nearest folder from `from` upwards that holds plinth.json.
 * @example findProject('/home/ada/app/src') // { root: '/home/ada/app', file: '/home/ada/app/plinth.json', settings }
 */
export function findProject(from: string): Project | null {
  let dir = resolve(from);
  for (;;) {
    const file = join(dir, PROJECT_FILE);
    if (existsSync(file)) return { root: dir, file, settings: parseProjectFile(readFileSync(file, 'utf8'), file) };
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
  return `${JSON.stringify(settings, null, 2)}\n`;
}
