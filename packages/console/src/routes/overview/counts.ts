import { api } from '../../lib/api';

/**
 * The overview's numbers: users (the admin API's total), tables and storage (one read through
 * the SQL runner), and from `GET /metrics` the messages queued and failed and the requests of
 * the last hour. Each is null when its source did not answer, so one failure hides one number.
 */
export interface Counts {
  users: number | null;
  tables: number | null;
  storageBytes: number | null;
  files: number | null;
  queued: number | null;
  failed: number | null;
  requestsLastHour: number | null;
  /** The first table of `public` by name, for the Connect snippet's first read. */
  firstTable: string | null;
}

const SIZES_SQL = `select (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p')) as tables,
  (select coalesce(sum(size), 0)::int8 from storage.objects) as bytes,
  (select count(*)::int from storage.objects) as files,
  (select min(c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm')) as first_table`;

/**
 * A sample's value in Prometheus text (a series without labels), or null.
 * @example sample('plinth_outbox_queued 3\n', 'plinth_outbox_queued') // 3
 */
export function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  const n = line ? Number(line.slice(series.length + 1)) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

/**
 * Bytes as a person reads them (1024-based, one decimal under 10).
 * @example bytesText(1536) // '1.5 KB'
 */
export function bytesText(n: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

export async function readCounts(): Promise<Counts> {
  const [users, sizes, metrics] = await Promise.allSettled([api.users('', 1, 0), api.sql(SIZES_SQL), api.metrics()]);
  const row =
    sizes.status === 'fulfilled'
      ? (sizes.value.results[0].rows[0] as { tables: number; bytes: number | string; files: number; first_table: string | null })
      : null;
  const text = metrics.status === 'fulfilled' ? metrics.value : null;
  return {
    users: users.status === 'fulfilled' ? users.value.total : null,
    tables: row ? Number(row.tables) : null,
    storageBytes: row ? Number(row.bytes) : null,
    files: row ? Number(row.files) : null,
    queued: text === null ? null : sample(text, 'plinth_outbox_queued'),
    failed: text === null ? null : sample(text, 'plinth_outbox_failed'),
    requestsLastHour: text === null ? null : sample(text, 'plinth_http_requests_last_hour'),
    firstTable: row?.first_table ?? null,
  };
}
