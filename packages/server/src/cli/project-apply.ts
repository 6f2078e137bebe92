/**
 * The project file's managed sections (plinth.json `auth`, `storage.buckets`, `realtime.tables`, `webhooks`), applied at every
 * start after the migrations and by `plinth dev` when the file is saved. The auth section goes
 * through the settings store's own merge and validation (the rules of PATCH
 * /api/v1/settings/auth); buckets are created or updated, never deleted.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Plinth } from '../app.js';
import {
  ConfigError,
  parseDotenv,
  parseProjectFile,
  type ProjectSettings,
  resolveAuthSecrets,
  resolveWebhookHeaders,
} from '../config/index.js';

/** A refusal of the API (invalid_settings, paid_plan_required) as one `config:` line naming the key. */
function asConfigError(err: unknown, file: string, section: string): never {
  const e = err as { code?: string; message?: string; details?: Array<{ field: string; message: string }> };
  if (e.code && e.details?.[0]) throw new ConfigError(`${file}: ${section}.${e.details[0].field} ${e.details[0].message}`);
  if (e.code) throw new ConfigError(`${file}: ${section}: ${e.message}`);
  throw err;
}

/**
 * Applies `settings` (read from `file`) to a running Plinth: the auth keys it names become
 * managed (409 managed_by_config through the API), its buckets are created or updated.
 * @example await applyProjectSettings(plinth, project.settings, project.file)
 */
export async function applyProjectSettings(
  plinth: Pick<Plinth, 'settings' | 'storage' | 'realtime' | 'webhooks'>,
  settings: ProjectSettings,
  file: string,
  env: Record<string, string | undefined> = process.env,
): Promise<{ auth: string[]; buckets: string[]; realtime: string[]; webhooks: string[] }> {
  const auth = settings.auth ? resolveAuthSecrets(settings.auth, env, file) : {};
  try {
    await plinth.settings.applyManaged(auth, file);
  } catch (err) {
    asConfigError(err, file, 'auth');
  }
  const buckets = settings.storage?.buckets ?? {};
  const managed = new Map<string, string[]>();
  for (const [name, fields] of Object.entries(buckets)) {
    try {
      if (await plinth.storage.buckets.find(name)) await plinth.storage.buckets.update(name, fields, true);
      else await plinth.storage.buckets.create(name, fields);
    } catch (err) {
      asConfigError(err, file, `storage.buckets.${name}`);
    }
    managed.set(name, Object.keys(fields));
  }
  plinth.storage.buckets.setManaged(file, managed);
  // Realtime tables: switched on and held (a table the file no longer names is left as it is, and freed).
  const tables = settings.realtime?.tables ?? [];
  for (const table of tables) {
    try {
      if (!(await plinth.realtime.tables.isEnabled(table))) await plinth.realtime.tables.enable(table);
    } catch (err) {
      asConfigError(err, file, `realtime.tables "${table}"`);
    }
  }
  plinth.realtime.tables.setManaged(file, tables);
  // Webhooks: created or updated by name with the API's checks, held; header values from the environment.
  let webhooks: string[] = [];
  try {
    webhooks = await plinth.webhooks.applyManaged(file, resolveWebhookHeaders(settings.webhooks ?? {}, env, file));
  } catch (err) {
    asConfigError(err, file, 'webhooks');
  }
  return { auth: plinth.settings.managed()?.keys ?? [], buckets: Object.keys(buckets), realtime: tables, webhooks };
}

/** The variables `env(NAME)` reads: the environment over the project's `.env`, as the rest of the config. */
function projectEnv(file: string): Record<string, string | undefined> {
  const dotenv = join(dirname(file), '.env');
  return { ...(existsSync(dotenv) ? parseDotenv(readFileSync(dotenv, 'utf8')) : {}), ...process.env };
}

/**
 * The start hook: applies the project's plinth.json, when the configuration has one.
 * @example await applyProjectFile(plinth)
 */
export async function applyProjectFile(plinth: Plinth): Promise<void> {
  const project = plinth.config.project;
  if (!project) return;
  const { auth, buckets, realtime, webhooks } = await applyProjectSettings(
    plinth,
    project.settings,
    project.file,
    projectEnv(project.file),
  );
  // A Supabase folder: one line for what Plinth keeps its own way, one for what it does not act on.
  if (project.supabase) {
    for (const note of project.supabase.notes) plinth.log.info(`${project.file}: ${note}`);
    if (project.supabase.settings.notActedOn.length)
      plinth.log.info(`${project.file}: not acted on by Plinth: ${project.supabase.settings.notActedOn.join(', ')}`);
  }
  if (auth.length || buckets.length || realtime.length || webhooks.length)
    plinth.log.info(
      { auth, buckets, realtime, webhooks },
      `${project.file}: ${auth.length} auth settings, ${buckets.length} buckets and ${realtime.length} realtime tables applied${webhooks.length ? `, ${webhooks.length} webhooks` : ''}`,
    );
}

/**
 * `plinth dev` on a save of plinth.json: read again and applied; a mistake is logged, the
 * server keeps the settings it had.
 */
export async function reapplyProjectFile(plinth: Plinth, file: string): Promise<void> {
  try {
    const settings = parseProjectFile(readFileSync(file, 'utf8'), file);
    const { auth, buckets, realtime, webhooks } = await applyProjectSettings(plinth, settings, file, projectEnv(file));
    plinth.log.info({ auth, buckets, realtime, webhooks }, `${file} applied`);
  } catch (err) {
    plinth.log.error(`config: ${(err as Error).message}`);
  }
}
