/** The files that make a folder a Plinth project: what `plinth init` (and a first `plinth start`) write. */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { DEFAULT_PROJECT, PROJECT_FILE, type ProjectSettings, projectFileText } from '../config/index.js';

export interface MadeProject {
  settings: ProjectSettings;
  /** What was written, for the message: `plinth.json`, `migrations/`, `.gitignore`. */
  wrote: string[];
}

/** The .gitignore line for a data dir inside the project: `/data/`. Null when the dir is outside it. */
function ignoreLine(root: string, dataDir: string): string | null {
  const rel = relative(root, resolve(root, dataDir)).split('\\').join('/');
  if (!rel || rel.startsWith('..') || rel.startsWith('/')) return null;
  return `/${rel}/`;
}

/** Whether .gitignore already ignores the folder (`data`, `data/`, `/data`, `/data/`). */
function ignores(text: string, line: string): boolean {
  const bare = line.replace(/^\/|\/$/g, '');
  return text.split(/\r?\n/).some((l) => [bare, `${bare}/`, `/${bare}`, `/${bare}/`].includes(l.trim()));
}

/**
 * Writes plinth.json (every key), makes the migrations folder and adds the data dir to
 * .gitignore (the embedded database holds the project's keys). Never overwrites a plinth.json.
 * @example makeProject('/home/ada/app', { port: 3001 })
 */
export function makeProject(root: string, options: { port?: number; dataDir?: string } = {}): MadeProject {
  const settings: ProjectSettings = {
    ...DEFAULT_PROJECT,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.dataDir !== undefined ? { data_dir: options.dataDir } : {}),
  };
  const wrote = [PROJECT_FILE];
  writeFileSync(join(root, PROJECT_FILE), projectFileText(settings), { flag: 'wx' });
  const migrations = join(root, settings.migrations_dir);
  if (!existsSync(migrations)) {
    mkdirSync(migrations, { recursive: true });
    wrote.push(`${settings.migrations_dir}/`);
  }
  const line = ignoreLine(root, settings.data_dir);
  const gitignore = join(root, '.gitignore');
  const text = existsSync(gitignore) ? readFileSync(gitignore, 'utf8') : '';
  if (line && !ignores(text, line)) {
    appendFileSync(
      gitignore,
      `${text && !text.endsWith('\n') ? '\n' : ''}# the embedded database and its keys (plinth.json data_dir)\n${line}\n`,
    );
    wrote.push('.gitignore');
  }
  return { settings, wrote };
}
