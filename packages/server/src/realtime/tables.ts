/**
 * Which tables' changes are pushed: `realtime.enable('t')` / `realtime.disable('t')` (migration
 * 0080), kept in memory and reloaded when either runs (NOTIFY plinth_realtime_tables) anywhere.
 */
import { CaptureError, captureFor, releaseFor } from '../changes/index.js';
import type { Db } from '../db/index.js';
import { ApiError } from '../http/index.js';

export interface RealtimeTables {
  /** Every plain table of public, with whether realtime captures it. */
  list(): Promise<Array<{ table: string; enabled: boolean }>>;
  /** Whether `table` is captured for realtime; asks the database when the cache says no (a fresh enable). */
  isEnabled(table: string): Promise<boolean>;
  enable(table: string): Promise<{ table: string; enabled: boolean }>;
  disable(table: string): Promise<{ table: string; enabled: boolean }>;
  /**
   * Marks the tables the project file (plinth.json `realtime.tables`) switches on: switching one
   * off through the API is then 409 managed_by_config. An empty list frees them.
   */
  setManaged(file: string, tables: readonly string[]): void;
  /** Reloads; resolves with the tables enabled now. */
  reload(): Promise<ReadonlySet<string>>;
  close(): Promise<void>;
}

/** The database's answer to enable/disable as the API's error (a missing table, no primary key). */
function refused(err: unknown): never {
  if (err instanceof CaptureError) {
    if (err.kind === 'no_table') throw new ApiError('table_not_found', err.message);
    throw new ApiError('invalid_parameter', err.message, { field: 'table' });
  }
  throw err;
}

/**
 * @example const tables = await realtimeTables(db, (enabled) => hub.endDisabled(enabled));
 */
export async function realtimeTables(db: Db, onChange: (enabled: ReadonlySet<string>) => void): Promise<RealtimeTables> {
  let enabled: ReadonlySet<string> = new Set();
  const load = async () => {
    const { rows } = await db.query<{ table_name: string }>('select table_name from realtime.tables() where enabled');
    enabled = new Set(rows.map((r) => r.table_name));
    return enabled;
  };
  await load();
  const reload = async () => {
    const now = await load();
    onChange(now);
    return now;
  };
  const unlisten = await db.listen('plinth_realtime_tables', () => void reload().catch(() => undefined));
  const entry = (table: string) => ({ table, enabled: enabled.has(table) });
  let managed: { file: string; tables: ReadonlySet<string> } | null = null;
  return {
    setManaged(file, tables) {
      managed = tables.length ? { file, tables: new Set(tables) } : null;
    },
    async list() {
      await load();
      const { rows } = await db.query<{ name: string }>(
        `select relname::text as name from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r' order by relname`,
      );
      return rows.map((r) => entry(r.name));
    },
    async isEnabled(table) {
      if (enabled.has(table)) return true;
      return (await load()).has(table);
    },
    async enable(table) {
      await captureFor(db, table, 'realtime').catch(refused);
      await reload();
      return entry(table);
    },
    async disable(table) {
      if (managed?.tables.has(table))
        throw new ApiError('managed_by_config', `The realtime table ${table} is managed by ${managed.file}; change it there.`, [
          { field: 'table', message: `is managed by ${managed.file}` },
        ]);
      await releaseFor(db, table, 'realtime').catch(refused);
      await reload();
      return entry(table);
    },
    reload,
    close: () => unlisten(),
  };
}
