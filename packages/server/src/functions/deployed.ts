/**
 * Deployed functions (docs/functions.md "Deploying"): bundles sent by `plinth functions deploy`
 * stored in the database as numbered versions (migration 0165), one of them live per function.
 * A live version overrides the project folder's file of the same name on every instance: each
 * instance reads which versions are live at most once a second (DEPLOYED_TTL_MS), on a call, and
 * at once after a deploy, rollback or delete made through itself.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/index.js';
import { ApiError } from '../http/index.js';
import type { Clock } from '../lib/index.js';

/** How long an instance trusts its copy of the live versions (another instance's deploy shows within it). */
export const DEPLOYED_TTL_MS = 1000;
/** The largest bundle a deploy takes (its JSON body is the bundle and a few fields). */
export const MAX_BUNDLE_BYTES = 8 * 1024 * 1024;

export interface LiveVersion {
  version: number;
  layout: 'plinth' | 'supabase';
  sha256: string;
  /** The version's schedule (a cron expression sent with the deploy), or null. */
  schedule: string | null;
}

export interface VersionRow {
  version: number;
  sha256: string;
  size: number;
  /** The server's clock when the deploy was stored. */
  created_at: string;
  schedule: string | null;
  live: boolean;
}

export interface Deployed {
  /** The live version of each deployed function (cached DEPLOYED_TTL_MS). */
  live(): Promise<Map<string, LiveVersion>>;
  /** The live versions as last read (no query; stale by up to DEPLOYED_TTL_MS, or more on an idle instance). */
  peek(): Map<string, LiveVersion>;
  /** The bundle's code of one version. */
  code(name: string, version: number): Promise<string>;
  /** Stores `bundle` (and its schedule, or null) as the next version of `name` and makes it live. */
  deploy(
    name: string,
    layout: 'plinth' | 'supabase',
    bundle: string,
    schedule?: string | null,
  ): Promise<{ version: number; sha256: string }>;
  /** Makes version `to` live, or the newest version older than the live one. */
  rollback(name: string, to?: number): Promise<{ version: number; from: number }>;
  /** Removes every version of `name`; false when it had none. */
  remove(name: string): Promise<boolean>;
  /** The versions of `name`, newest first. */
  versions(name: string): Promise<VersionRow[]>;
}

export function createDeployed(db: Db, clock: Clock): Deployed {
  let cache: { at: number; map: Map<string, LiveVersion> } | null = null;
  let reading: Promise<Map<string, LiveVersion>> | null = null;
  let last = new Map<string, LiveVersion>();
  const forget = () => {
    cache = null;
  };
  const notDeployed = (name: string) =>
    new ApiError('function_not_found', `The function ${name} has no deployed version (plinth functions deploy ${name}).`);

  return {
    async live() {
      if (cache && Date.now() - cache.at < DEPLOYED_TTL_MS) return cache.map;
      reading ??= (async () => {
        try {
          const { rows } = await db.query<{
            function: string;
            version: number;
            layout: 'plinth' | 'supabase';
            sha256: string;
            schedule: string | null;
          }>(
            `select d.function, d.version, v.layout, v.sha256, v.schedule from plinth.function_deployments d
               join plinth.function_versions v on v.function = d.function and v.version = d.version`,
          );
          const map = new Map(
            rows.map((r) => [r.function, { version: Number(r.version), layout: r.layout, sha256: r.sha256, schedule: r.schedule ?? null }]),
          );
          cache = { at: Date.now(), map };
          last = map;
          return map;
        } finally {
          reading = null;
        }
      })();
      return reading;
    },
    peek: () => last,
    async code(name, version) {
      const { rows } = await db.query<{ bundle: string }>(
        'select bundle from plinth.function_versions where function = $1 and version = $2',
        [name, version],
      );
      if (!rows[0]) throw notDeployed(name);
      return rows[0].bundle;
    },
    async deploy(name, layout, bundle, schedule = null) {
      const sha256 = createHash('sha256').update(bundle).digest('hex');
      const at = clock.now();
      const version = await db.transaction(async (tx) => {
        // One deploy of a function at a time (the next number is read, then written).
        await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`plinth.function_versions:${name}`]);
        const { rows } = await tx.query<{ version: number }>(
          `insert into plinth.function_versions (function, version, layout, bundle, sha256, schedule, created_at)
             select $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, to_timestamp($6::float8 / 1000) from plinth.function_versions where function = $1
           returning version`,
          [name, layout, bundle, sha256, schedule, at],
        );
        const v = Number(rows[0].version);
        await tx.query(
          `insert into plinth.function_deployments (function, version, updated_at) values ($1, $2, to_timestamp($3::float8 / 1000))
             on conflict (function) do update set version = excluded.version, updated_at = excluded.updated_at`,
          [name, v, at],
        );
        return v;
      });
      forget();
      return { version, sha256 };
    },
    async rollback(name, to) {
      const out = await db.transaction(async (tx) => {
        const { rows: cur } = await tx.query<{ version: number }>(
          'select version from plinth.function_deployments where function = $1 for update',
          [name],
        );
        if (!cur[0]) throw notDeployed(name);
        const from = Number(cur[0].version);
        const { rows } =
          to === undefined
            ? await tx.query<{ version: number }>(
                'select max(version) as version from plinth.function_versions where function = $1 and version < $2',
                [name, from],
              )
            : await tx.query<{ version: number }>('select version from plinth.function_versions where function = $1 and version = $2', [
                name,
                to,
              ]);
        const target = rows[0]?.version;
        if (target === undefined || target === null)
          throw new ApiError(
            'not_found',
            to === undefined
              ? `The function ${name} has no version older than ${from} to roll back to (plinth functions versions ${name} lists them).`
              : `The function ${name} has no version ${to} (plinth functions versions ${name} lists them).`,
          );
        await tx.query(
          'update plinth.function_deployments set version = $2, updated_at = to_timestamp($3::float8 / 1000) where function = $1',
          [name, Number(target), clock.now()],
        );
        return { version: Number(target), from };
      });
      forget();
      return out;
    },
    async remove(name) {
      const gone = await db.transaction(async (tx) => {
        await tx.query('delete from plinth.function_deployments where function = $1', [name]);
        const { rows } = await tx.query('delete from plinth.function_versions where function = $1 returning version', [name]);
        return rows.length > 0;
      });
      forget();
      return gone;
    },
    async versions(name) {
      const { rows } = await db.query<{
        version: number;
        sha256: string;
        size: number;
        created_at: Date | string;
        schedule: string | null;
        live: boolean;
      }>(
        `select v.version, v.sha256, length(v.bundle) as size, v.created_at, v.schedule, (d.version = v.version) is true as live
           from plinth.function_versions v left join plinth.function_deployments d on d.function = v.function
          where v.function = $1 order by v.version desc`,
        [name],
      );
      return rows.map((r) => ({
        version: Number(r.version),
        sha256: r.sha256,
        size: Number(r.size),
        created_at: new Date(r.created_at).toISOString(),
        schedule: r.schedule ?? null,
        live: r.live,
      }));
    },
  };
}
