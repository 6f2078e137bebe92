/**
 * Which project a command acts on. A project is found by its plinth.json, walking up from the
 * working folder as git finds `.git`; `--data-dir D` or a DATABASE_URL in the environment name
 * one explicitly. Every command that acts on one says which in one line first, and only
 * `start` (and `dev`) and `init` may make one: any other command outside a project says so
 * and stops, rather than make an empty database somewhere and act on it.
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { type Config, databaseWhere, findProject, loadConfig, type Project } from '../config/index.js';
import { type Args, flagValue, UsageError } from './args.js';
import { fail, note } from './output.js';

/**
 * `none`: needs no project; `existing`: one must be found or named (and a data dir named with
 * --data-dir must hold a database); `into`: as existing, but the data dir may be empty (restore
 * fills it); `create`: a project is made here when none is found (start, dev).
 */
export type ProjectPolicy = 'none' | 'existing' | 'into' | 'create';

export interface CommandContext {
  args: Args;
  /** The configuration of the project the command acts on (null for policy `none`). */
  config: Config;
  /** Where the command runs (the process's working folder). */
  cwd: string;
}

export interface CommandModule {
  /** Checks the command line before the project is looked for: a usage mistake comes first (UsageError). */
  check?(args: Args): void;
  run(context: CommandContext): Promise<void>;
}

/** An embedded data dir holds a database once a start (or a sql, migrate… in a project) made it. */
export function hasDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, 'pgdata', 'PG_VERSION'));
}

/** A path for messages: relative to the working folder when below it, else absolute. */
export function shown(path: string, cwd = process.cwd()): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? rel : path;
}

/**
 * The one line naming what a command acts on.
 * @example projectLine(config) // 'project /home/ada/app: embedded database in data'
 */
export function projectLine(config: Config, cwd = process.cwd(), dataDirFlag = false): string {
  if (config.databaseUrl) {
    const database = `PostgreSQL at ${databaseWhere(config.databaseUrl)} (${config.databaseUrlVariable})`;
    return config.project ? `project ${config.project.root}: ${database}` : `project: ${database}`;
  }
  // A data dir named on the command line is the project, whatever plinth.json is above.
  if (dataDirFlag || !config.project) return `project: embedded database in ${shown(config.dataDir, cwd)}`;
  return `project ${config.project.root}: embedded database in ${shown(config.dataDir, cwd)}`;
}

/**
 * The configuration a command runs with: flags over the environment over the project's `.env`
 * and plinth.json. Throws ConfigError (one `config:` line) or UsageError.
 */
export function configFor(args: Args, project: Project | null, env: Record<string, string | undefined> = process.env): Config {
  const portFlag = flagValue(args, 'port');
  const port = portFlag !== undefined ? Number(portFlag) : undefined;
  if (port !== undefined && (!/^\d+$/.test(portFlag ?? '') || port > 65535)) {
    throw new UsageError(`--port must be a port number (0–65535), got "${portFlag}"`);
  }
  const migrate = args.flags.migrate;
  const migrationsDir =
    migrate === undefined
      ? undefined
      : migrate === true
        ? resolve(project?.root ?? '.', project?.settings.migrations_dir ?? 'migrations')
        : resolve(migrate);
  return loadConfig(env, { port, dataDir: flagValue(args, 'data-dir'), workers: flagValue(args, 'workers'), migrationsDir, project });
}

/**
 * Finds the project for a command under its policy, prints the line naming it, and returns its
 * configuration; a command that needs a project and has none ends here with one line.
 * @example const config = resolveProject(args, 'existing');
 */
export function resolveProject(args: Args, policy: ProjectPolicy, cwd = process.cwd()): Config {
  const project = policy === 'none' ? null : findProject(cwd);
  const config = configFor(args, project);
  if (policy === 'none') return config;
  const dataDirFlag = flagValue(args, 'data-dir');
  if (!project && dataDirFlag === undefined && !config.databaseUrl && (policy === 'existing' || policy === 'into')) {
    fail(
      `no Plinth project here: no plinth.json in ${cwd} or a folder above it; run plinth init to make one here, or cd into your project's folder`,
    );
  }
  // A data dir named on the command line is a project only once a start has made its database:
  // a mistyped path must not become a new, empty project that the command then acts on.
  if (policy === 'existing' && !config.databaseUrl && dataDirFlag !== undefined && !hasDatabase(config.dataDir)) {
    fail(
      `no Plinth database in ${config.dataDir}: plinth start --data-dir ${dataDirFlag} makes one there (only start and init make projects)`,
    );
  }
  // start and dev print it above their banner, on stdout; other commands keep stdout for their output.
  const line = projectLine(config, cwd, dataDirFlag !== undefined);
  if (policy === 'create') process.stdout.write(`${line}\n`);
  else note(line);
  return config;
}
