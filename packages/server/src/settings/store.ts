import { isLoopback, isUrlAllowed, OAUTH_PROVIDERS, originMatches, type OriginPattern, parseOriginEntry } from '@plinth/shared';
import type { Logger } from 'pino';
import type { Db, Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { singleFlight } from '../lib/index.js';
import { defaultAuthSettings, defaultProject } from './defaults.js';
import type { AuthSettings, FieldProblem, ProjectInfo, RemoteSettingsCheck, SettingsStore } from './types.js';
import { mergeAuthPatch, validateAuthSettings } from './validate.js';

const AUTH_KEY = 'auth_settings';
const PROJECT_KEY = 'project';
const CHANNEL = 'plinth_settings';
const PLANS = ['free', 'pro', 'team', 'enterprise'] as const;

function parse<T>(v: unknown): T | null {
  if (v === null || v === undefined) return null;
  return v as T;
}

/** Stored settings over today's defaults, so a field added in a later version gets its default. */
function withDefaults(stored: Partial<AuthSettings> | null): AuthSettings {
  const d = defaultAuthSettings();
  if (!stored) return d;
  return {
    ...d,
    ...stored,
    providers: Object.fromEntries(
      OAUTH_PROVIDERS.map((id) => [id, { ...d.providers[id], ...stored.providers?.[id] }]),
    ) as AuthSettings['providers'],
    oidc_providers: Array.isArray(stored.oidc_providers) ? stored.oidc_providers : [],
    email_templates: { ...stored.email_templates },
  };
}

/** The settings a remote check depends on: when these are the same, its answer still holds. */
function remoteInputs(next: AuthSettings, previous: AuthSettings): string {
  const pick = (s: AuthSettings) => s.oidc_providers.map((p) => [p.id, p.issuer, p.enabled, p.token_endpoint_auth_method]);
  return JSON.stringify([pick(next), pick(previous)]);
}

const refused = (problems: FieldProblem[]) =>
  new ApiError('invalid_settings', `The settings were not saved: ${problems[0].field} ${problems[0].message}.`, problems);

async function read(q: Queryable, key: string, lock = false): Promise<unknown> {
  const r = await q.query<{ value: unknown }>(`select value from plinth.kv where key = $1${lock ? ' for update' : ''}`, [key]);
  return r.rows[0]?.value ?? null;
}

async function write(q: Queryable, key: string, value: unknown): Promise<void> {
  await q.query(
    'insert into plinth.kv (key, value, updated_at) values ($1, $2::jsonb, now()) on conflict (key) do update set value = excluded.value, updated_at = now()',
    [key, JSON.stringify(value)],
  );
  // Delivered at commit: every instance (this one included) reloads its cache.
  await q.query('select pg_notify($1, $2)', [CHANNEL, key]);
}

/** The result of a PATCH on `current`: merged and valid, or ApiError invalid_settings. */
function mergeValid(current: AuthSettings, patch: unknown): AuthSettings {
  const { merged, problems } = mergeAuthPatch(current, patch);
  problems.push(...validateAuthSettings(merged));
  if (problems.length) throw refused(problems);
  return merged;
}

/**
 * The keys a patch names, as the project file manages them: top-level settings, and one key per
 * entry of `providers` and `email_templates` (`providers.github`), so the others stay editable.
 * @example managedKeysOf({ providers: { github: {} }, min_password_length: 10 }) // ['providers.github', 'min_password_length']
 */
export function managedKeysOf(patch: unknown): string[] {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return [];
  const keys: string[] = [];
  for (const [k, v] of Object.entries(patch)) {
    if ((k === 'providers' || k === 'email_templates') && typeof v === 'object' && v !== null && !Array.isArray(v))
      for (const name of Object.keys(v)) keys.push(`${k}.${name}`);
    else keys.push(k);
  }
  return keys;
}

/**
 * The project's settings, kept in the database and cached in memory. Reads never await; a
 * change made on any instance reaches every instance through NOTIFY. `check` is asked about
 * every valid change before it is saved (the OpenID Connect providers' discovery: auth/oauth).
 * @example const settings = await createSettingsStore(db, { publicUrl: 'http://localhost:8080', log });
 */
export async function createSettingsStore(
  db: Db,
  opts: { publicUrl: string; log: Logger; check?: RemoteSettingsCheck },
): Promise<SettingsStore> {
  const ownOrigin = new URL(opts.publicUrl).origin;
  // Development: a server on localhost lets pages on any local port call it (cors_allow_localhost).
  const developing = isLoopback(opts.publicUrl);
  let auth = defaultAuthSettings();
  let project = defaultProject(opts.publicUrl);
  let origins: OriginPattern[] = [];

  const apply = (a: AuthSettings, p: ProjectInfo) => {
    auth = a;
    project = p;
    origins = a.cors_origins.map(parseOriginEntry).filter((o): o is OriginPattern => !('problem' in o));
  };
  const load = async () => {
    const [a, p] = await Promise.all([read(db, AUTH_KEY), read(db, PROJECT_KEY)]);
    const stored = parse<Partial<ProjectInfo>>(p);
    apply(withDefaults(parse<Partial<AuthSettings>>(a)), { ...defaultProject(opts.publicUrl), ...stored, public_url: opts.publicUrl });
  };
  // One load at a time, and one more after the last request (overlapping loads could put
  // older settings back in the cache).
  const reload = singleFlight(load);
  await reload();
  const unlisten = await db.listen(CHANNEL, () => {
    reload().catch((err) => opts.log.warn({ err }, 'settings reload failed'));
  });

  /** Saves `patch` over the stored settings, or null when the remote check's inputs changed meanwhile. */
  const save = (patch: unknown, approved: string | null) =>
    db.transaction(async (tx) => {
      const current = withDefaults(parse<Partial<AuthSettings>>(await read(tx, AUTH_KEY, true)));
      const merged = mergeValid(current, patch);
      if (opts.check && remoteInputs(merged, current) !== approved) return null;
      const plan = parse<Partial<ProjectInfo>>(await read(tx, PROJECT_KEY))?.plan ?? 'free';
      if (merged.phone_enabled && !current.phone_enabled && plan === 'free') {
        throw new ApiError('paid_plan_required', 'Phone sign-in needs a paid plan (Pro or above); change the plan first.');
      }
      await write(tx, AUTH_KEY, merged);
      return merged;
    });

  let managed: { file: string; keys: string[] } | null = null;
  const update = async (patch: unknown): Promise<AuthSettings> => {
    // The remote check fetches documents from other servers (seconds, at worst its timeout):
    // never inside the transaction, which on PGlite would hold every other request. What it
    // approved is compared again under the lock; a change made meanwhile is checked anew.
    let approved: string | null = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (opts.check) {
        const current = withDefaults(parse<Partial<AuthSettings>>(await read(db, AUTH_KEY)));
        const merged = mergeValid(current, patch);
        const inputs = remoteInputs(merged, current);
        if (inputs !== approved) {
          const problems = await opts.check(merged, current);
          if (problems.length) throw refused(problems);
          approved = inputs;
        }
      }
      const next = await save(patch, approved);
      if (next) {
        await reload();
        return next;
      }
    }
    throw new ApiError('conflict', 'The settings kept changing while they were checked; save again.');
  };

  return {
    auth: () => auth,
    project: () => project,
    async updateAuth(patch) {
      const key = managed && managedKeysOf(patch).find((k) => managed?.keys.includes(k));
      if (managed && key)
        throw new ApiError('managed_by_config', `The setting ${key} is managed by ${managed.file}; change it there.`, [
          { field: key, message: `is managed by ${managed.file}` },
        ]);
      return update(patch);
    },
    async applyManaged(patch, file) {
      const next = await update(patch);
      managed = { file, keys: managedKeysOf(patch) };
      return next;
    },
    managed: () => managed,
    async updateProject(patch) {
      const problems: Array<{ field: string; message: string }> = [];
      const body = (typeof patch === 'object' && patch !== null && !Array.isArray(patch) ? patch : null) as Record<string, unknown> | null;
      if (!body) problems.push({ field: '', message: 'the body must be a JSON object' });
      for (const [k, v] of Object.entries(body ?? {})) {
        if (k === 'plan') {
          if (!PLANS.includes(v as (typeof PLANS)[number])) problems.push({ field: 'plan', message: `must be one of ${PLANS.join(', ')}` });
        } else if (k === 'name') {
          if (typeof v !== 'string' || !v.trim() || v.length > 100)
            problems.push({ field: 'name', message: 'must be a string of 1 to 100 characters' });
        } else problems.push({ field: k, message: k === 'public_url' ? 'comes from the PUBLIC_URL config' : 'is not a project field' });
      }
      if (problems.length)
        throw new ApiError('invalid_settings', `The project was not saved: ${problems[0].field} ${problems[0].message}.`, problems);
      const next = await db.transaction(async (tx) => {
        const stored = parse<Partial<ProjectInfo>>(await read(tx, PROJECT_KEY, true)) ?? {};
        const merged = { ...defaultProject(opts.publicUrl), ...stored, ...body, public_url: opts.publicUrl } as ProjectInfo;
        await write(tx, PROJECT_KEY, { plan: merged.plan, name: merged.name });
        // A free plan cannot keep phone sign-in on.
        if (merged.plan === 'free') {
          const a = withDefaults(parse<Partial<AuthSettings>>(await read(tx, AUTH_KEY, true)));
          if (a.phone_enabled) await write(tx, AUTH_KEY, { ...a, phone_enabled: false });
        }
        return merged;
      });
      await reload();
      return next;
    },
    isOriginAllowed: (origin) =>
      origin === ownOrigin || originMatches(origin, origins) || (developing && auth.cors_allow_localhost && isLoopback(origin)),
    corsAdvice(origin) {
      const o = origin.slice(0, 200);
      if (developing && isLoopback(origin)) {
        return `cors_allow_localhost is off: turn it on, or add ${o} to the cors_origins auth setting`;
      }
      return `add ${o} to the cors_origins auth setting (console: Auth → URLs; or PATCH /api/v1/settings/auth)${
        isLoopback(origin)
          ? `; local pages are allowed by default only while PUBLIC_URL is a localhost address, and it is ${ownOrigin}`
          : ''
      }`;
    },
    isRedirectAllowed: (url) => isUrlAllowed(url, auth.allowed_redirect_urls),
    async close() {
      await unlisten();
    },
  };
}
