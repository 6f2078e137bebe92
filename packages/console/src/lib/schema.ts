import { type QueryClient, useQuery } from '@tanstack/react-query';
import { keysQuery } from './queries';
import { api } from './api';
import { type ApiDoc, parseOpenApi } from './openapi';

/**
 * What the API explorer and the table browser know of the project's tables: the OpenAPI
 * document (the endpoints, as apps see them) and, per table, PostgreSQL's own column types and
 * primary key. Both follow schema changes without a reload: the SQL runner invalidates them
 * after DDL, and the document is asked for again every few seconds while a page shows it
 * (the server caches its text per schema version, so that is cheap) and on window focus.
 */

export const SCHEMA_POLL_MS = 5_000;

/** The parsed OpenAPI document (it needs a key; the public key is fetched with the admin session). */
export function useApiDoc() {
  const keys = useQuery(keysQuery);
  const doc = useQuery({
    queryKey: ['openapi'],
    queryFn: () => api.openapi(keys.data?.public_key ?? ''),
    enabled: Boolean(keys.data),
    select: (raw: unknown): ApiDoc => parseOpenApi(raw),
    refetchInterval: SCHEMA_POLL_MS,
    refetchOnWindowFocus: true,
    staleTime: 0,
  });
  return { keys, doc, error: keys.error ?? doc.error, isLoading: keys.isLoading || doc.isLoading };
}

/**
 * A table's columns as PostgreSQL has them (type names, primary key). `fingerprint` (the
 * document's column names) makes a change seen in the document read them again.
 */
export function useTableColumns(table: string | undefined, fingerprint: string) {
  return useQuery({
    queryKey: ['table-columns', table, fingerprint],
    queryFn: () => api.tableColumns(table ?? ''),
    enabled: Boolean(table),
    staleTime: SCHEMA_POLL_MS,
  });
}

/** After DDL (the SQL runner): every page that shows the schema reads it again. */
export function schemaChanged(queryClient: QueryClient): void {
  void queryClient.invalidateQueries({ queryKey: ['openapi'] });
  void queryClient.invalidateQueries({ queryKey: ['table-columns'] });
}

/**
 * Runs a script the way the SQL runner does (`POST /api/v1/sql` as the runner's role), and after
 * DDL makes every page that shows the schema read it again. The SQL runner, the table editor
 * and the policy editor all run their SQL here.
 * @example const res = await runScript(queryClient, 'alter table notes add column done boolean');
 */
export async function runScript(queryClient: QueryClient, text: string) {
  const res = await api.sql(text);
  if (res.results.some((r) => /^(CREATE|ALTER|DROP|COMMENT|GRANT|REVOKE)/.test(r.command))) {
    void queryClient.invalidateQueries({ queryKey: ['sql-columns'] });
    void queryClient.invalidateQueries({ queryKey: ['table-structure'] });
    void queryClient.invalidateQueries({ queryKey: ['policies'] });
    schemaChanged(queryClient);
  }
  return res;
}
