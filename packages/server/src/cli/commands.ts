/**
 * THE table of CLI commands: one entry each, with its flags, the project it may act on and
 * its help lines. A command's code is loaded only when it runs (`load`), so `plinth help` or
 * `plinth keys` does not pay for the server's modules. Adding a command is one entry here and
 * a module exporting `run(context)`.
 */
import type { CommandShape } from './args.js';
import type { CommandModule, ProjectPolicy } from './context.js';

export interface CommandSpec extends CommandShape {
  /** Which project it acts on (context.ts ProjectPolicy); a function decides from the flags (gen types --url needs none). */
  project: ProjectPolicy | ((flags: Record<string, string | true>) => ProjectPolicy);
  /** The lines of `plinth help`: the synopsis, then what it does. */
  help: [string, string];
  load: () => Promise<CommandModule>;
}

const DATA_DIR = { 'data-dir': 'value' } as const;

export const COMMANDS: Record<string, CommandSpec> = {
  init: {
    flags: { port: 'value', ...DATA_DIR },
    positional: 0,
    project: 'none',
    help: ['init [--port N] [--data-dir D]', 'make a project in this folder: plinth.json, migrations/, a .gitignore entry'],
    load: () => import('./init.js'),
  },
  start: {
    flags: { port: 'value', migrate: 'optional', workers: 'value', ...DATA_DIR },
    positional: 0,
    project: 'create',
    help: [
      'start [--port N] [--migrate [DIR]] [--workers N|auto]',
      'the server (making a project here when there is none); --migrate applies migrations/*.sql first',
    ],
    load: () => import('./start.js'),
  },
  dev: {
    flags: { port: 'value', ...DATA_DIR },
    positional: 0,
    project: 'create',
    help: ['dev [--port N]', 'the server for development: applies new migrations/*.sql as they appear, readable logs'],
    load: () => import('./dev.js'),
  },
  keys: {
    flags: { json: 'bool', revoke: 'bool', ...DATA_DIR },
    positional: 1,
    project: 'existing',
    help: [
      'keys [--json] | keys rotate-signing [--revoke]',
      "print the project's public and secret keys; rotate-signing: a new token-signing key (--revoke: every session signs in again)",
    ],
    load: () => import('./keys.js'),
  },
  status: {
    flags: { output: 'value', ...DATA_DIR },
    positional: 2,
    project: 'existing',
    help: [
      'status [-o env|json]',
      "what supabase status prints: the API URL, the database URL where there is one, the keys (a Supabase folder's anon and service_role keys)",
    ],
    load: () => import('./status.js'),
  },
  sql: {
    flags: { json: 'bool', csv: 'bool', ...DATA_DIR },
    positional: Number.POSITIVE_INFINITY,
    project: 'existing',
    help: ['sql "<query>" [--json|--csv]', 'run SQL (through the running server when there is one)'],
    load: () => import('./sql.js'),
  },
  migrate: {
    flags: { ...DATA_DIR },
    positional: 1,
    project: 'existing',
    help: ['migrate [DIR]', "apply the project's migrations/*.sql (or DIR) once each, in name order"],
    load: () => import('./migrate.js'),
  },
  migration: {
    flags: { ...DATA_DIR },
    positional: 2,
    project: 'existing',
    help: ['migration new <name>', 'an empty migrations/<timestamp>_<name>.sql to write a schema change in'],
    load: () => import('./migration.js'),
  },
  functions: {
    flags: { url: 'value', key: 'value', to: 'value', port: 'value', ...DATA_DIR },
    positional: 2,
    project: 'existing',
    help: [
      'functions new|list|serve|deploy|rollback|delete|versions|logs [name] [--url U --key K] [--to N]',
      'write, list, serve, deploy and roll back functions (docs/functions.md)',
    ],
    load: () => import('./functions.js'),
  },
  secrets: {
    flags: { url: 'value', key: 'value', 'env-file': 'value', ...DATA_DIR },
    positional: Number.POSITIVE_INFINITY,
    project: (flags) => (flags.url === undefined ? 'existing' : 'none'),
    help: [
      'secrets set NAME=value…|NAME (stdin) [--env-file F] | list | unset NAME… [--url U --key K]',
      "the functions' secrets, write-only (list names them): functions/.env, or with --url a server's (stored sealed in its database)",
    ],
    load: () => import('./secrets.js'),
  },
  db: {
    flags: { yes: 'bool', 'dry-run': 'bool', ...DATA_DIR },
    positional: 2,
    project: 'existing',
    help: [
      'db reset [--yes] | diff [name] [--dry-run]',
      'reset: drop and make again the embedded database, apply the migrations, then the seeds (seed.sql or plinth.json db.seed); diff: write what the console changed as the next migration',
    ],
    load: () => import('./db.js'),
  },
  gen: {
    flags: { out: 'value', url: 'value', key: 'value', ...DATA_DIR },
    positional: 1,
    project: (flags) => (flags.url === undefined ? 'existing' : 'none'),
    help: [
      'gen types [--out F] [--url URL --key sk_…]',
      "TypeScript types of the tables for createClient<Database>(), from the project or a running server's URL",
    ],
    load: () => import('./gen.js'),
  },
  admin: {
    flags: { email: 'value', password: 'value', ...DATA_DIR },
    positional: 1,
    project: 'existing',
    help: ['admin create|set-password --email E [--password P]', 'console admins (the password is asked for when not given)'],
    load: () => import('./admin.js'),
  },
  backup: {
    flags: { out: 'value', ...DATA_DIR },
    positional: 0,
    project: 'existing',
    help: ['backup [--out F]', 'a backup of the embedded project (database, keys, files) into one file, also while it runs'],
    load: () => import('./backup.js'),
  },
  restore: {
    flags: { 'max-size': 'value', ...DATA_DIR },
    positional: 1,
    project: 'into',
    help: [
      'restore F [--max-size 10GiB]',
      'put a backup back into the project, its server stopped (the data dir that was there is kept aside); it brings its own keys and admins',
    ],
    load: () => import('./restore.js'),
  },
  help: {
    flags: {},
    positional: 1,
    project: 'none',
    help: ['help', 'this list'],
    load: () => import('./help.js'),
  },
};
