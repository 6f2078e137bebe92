import type { PlinthClient, RestResult } from '@plinth/sdk';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { CONTROL, FilterEditor } from '../../components/QueryControls';
import { Button, Confirm, ErrorNotice, Loading, Notice } from '../../components/ui';
import { ApiFailure, type PgColumn } from '../../lib/api';
import type { TableDoc } from '../../lib/openapi';
import { useRights } from '../../lib/roles';
import { type FilterRow, filterSteps, type OrderRow, orderSteps, runChain, type Step } from '../../lib/rest';
import { type DataSearch, PAGE_SIZES } from '../../lib/search';
import { Grid } from './Grid';
import { InsertRow } from './InsertRow';
import { JsonEdit } from './JsonEdit';
import { cellText } from './values';
import { useRowWrites } from './writes';

type Row = Record<string, unknown>;

/**
 * One table's rows: server-side filters, sort and pages, the total count, and edits, inserts
 * and deletes whose refusals show the server's code and message (and the column it names).
 */
export function TableRows({
  client,
  tableDoc,
  columns,
  inserting,
  setInserting,
}: {
  client: PlinthClient | null;
  tableDoc: TableDoc;
  columns: PgColumn[] | undefined;
  inserting: boolean;
  setInserting: (o: boolean) => void;
}) {
  const table = tableDoc.name;
  const search = useSearch({ strict: false }) as DataSearch;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const size = search.size ?? 100;
  const page = search.page ?? 1;
  const filters = search.f ?? [];
  const pk = primaryKey(columns);
  const { change } = useRights();
  // A viewer's rows are read-only as a view's are: no cell edits, no delete (the server would refuse them).
  const writable = Boolean(pk && tableDoc.ops.includes('update')) && change;
  // Without an order of its own, a page is in key order: rows stay in place when edited.
  const order: OrderRow[] = search.order ?? (pk ? [[pk, 'asc']] : []);

  const rows = useQuery({
    queryKey: ['rows', table, filters, order, page, size],
    enabled: Boolean(client),
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const where = filterSteps(filters, tableDoc.columns);
      if ('error' in where) throw new ApiFailure('invalid_filter', where.error, 400);
      const steps: Step[] = [
        { method: 'select', args: ['*', { count: 'exact' }] },
        ...where.steps,
        ...orderSteps(order),
        { method: 'limit', args: [size] },
        { method: 'offset', args: [(page - 1) * size] },
      ];
      const res = await runChain<RestResult<Row[]>>(client as PlinthClient, table, steps);
      if (res.error) throw new ApiFailure(res.error.code, res.error.message, res.status, res.error.details);
      return { rows: res.data ?? [], count: res.count ?? 0 };
    },
  });

  const [draft, setDraft] = useState<FilterRow[]>(filters);
  const filterKey = JSON.stringify(filters);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the URL's filters (by value) reset the draft
  useEffect(() => setDraft(filters), [filterKey, table]);
  // Boxed, so a key that is itself null or 0 still means "a row is being deleted".
  const [deleting, setDeleting] = useState<{ key: unknown } | null>(null);
  const w = useRowWrites({ client, table, pk, columns, refresh: () => queryClient.invalidateQueries({ queryKey: ['rows', table] }) });

  const go = (patch: Partial<DataSearch>) => void navigate({ to: '.', search: (prev: DataSearch) => ({ ...prev, ...patch }) } as never);
  const list = rows.data?.rows ?? [];
  const total = rows.data?.count ?? 0;

  function sort(column: string) {
    const current = search.order?.find(([c]) => c === column)?.[1];
    const next: OrderRow[] | undefined = current === 'asc' ? [[column, 'desc']] : current === 'desc' ? undefined : [[column, 'asc']];
    go({ order: next, page: undefined });
  }

  const first = total ? (page - 1) * size + 1 : 0;
  const last = Math.min(total, page * size);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          go({ f: draft.length ? draft : undefined, page: undefined });
        }}
        className="space-y-2 rounded-lg border border-line bg-surface p-3"
      >
        <FilterEditor rows={draft} columns={tableDoc.columns.map((c) => c.name)} onChange={setDraft} />
        <div className="flex gap-2">
          <Button type="submit">Apply filters</Button>
          {filters.length > 0 && <Button onClick={() => go({ f: undefined, page: undefined })}>Clear filters</Button>}
        </div>
      </form>
      {!writable && (
        <p className="text-xs text-fg-muted">
          {!change
            ? 'Your role reads only: rows are shown read-only.'
            : `${tableDoc.ops.includes('update') ? 'No single-column primary key' : 'A view'}: rows are shown read-only here (the SQL runner can change them).`}
        </p>
      )}
      {w.outcome?.kind === 'error' && (
        <Notice kind="error" title="The server refused">
          <code data-testid="refusal-code">{w.outcome.refusal.code}</code>: {w.outcome.refusal.message}
          {w.outcome.refusal.column && (
            <>
              {' '}
              (column <code data-testid="refusal-column">{w.outcome.refusal.column}</code>)
            </>
          )}
        </Notice>
      )}
      {w.outcome?.kind === 'ok' && <Notice kind="ok">{w.outcome.text}</Notice>}
      {rows.error && <ErrorNotice error={rows.error} retry={() => void rows.refetch()} />}
      {rows.isLoading && <Loading label="Loading rows" />}
      {rows.data && columns && (
        <>
          <div className="flex flex-wrap items-center gap-3 text-sm">
            <p role="status" data-testid="rows-summary">
              {total === 0 ? 'No rows.' : `Rows ${first}–${last} of ${total}`}
              {rows.isFetching && !rows.isLoading ? ' (updating…)' : ''}
            </p>
            <span className="ml-auto" />
            <label className="flex items-center gap-1.5">
              Rows per page
              <select
                className={CONTROL}
                value={size}
                onChange={(e) => go({ size: Number(e.target.value) as DataSearch['size'], page: undefined })}
              >
                {PAGE_SIZES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
            <Button disabled={page <= 1} onClick={() => go({ page: page - 1 > 1 ? page - 1 : undefined })}>
              Previous page
            </Button>
            <Button disabled={last >= total} onClick={() => go({ page: page + 1 })}>
              Next page
            </Button>
          </div>
          <Grid
            table={table}
            resetKey={`${table}|${filterKey}|${JSON.stringify(order)}|${page}|${size}`}
            columns={columns}
            rows={list}
            pk={writable ? pk : null}
            order={order}
            onSort={sort}
            editing={w.editing}
            onEdit={w.setEditing}
            onSave={(e, asNull) => void w.save(e, asNull)}
            onOpenJson={(e) => {
              w.setJsonError(null);
              w.setJsonEdit(e);
            }}
            onDelete={(key) => setDeleting({ key })}
            saving={w.saving}
          />
        </>
      )}
      <InsertRow table={table} columns={columns ?? []} open={inserting} onOpenChange={setInserting} onInsert={w.insert} />
      <JsonEdit
        edit={w.jsonEdit}
        pk={pk}
        columns={columns}
        error={w.jsonError}
        saving={w.saving}
        onChange={w.setJsonEdit}
        onSave={(e, asNull) => void w.save(e, asNull)}
      />
      <Confirm
        title="Delete this row?"
        description={
          deleting !== null && pk ? `The row with ${pk} ${cellText(deleting.key)} is deleted from ${table}. This cannot be undone.` : ''
        }
        confirm="Delete row"
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        onConfirm={() => {
          if (deleting === null) return;
          setDeleting(null);
          void w.remove(deleting.key);
        }}
      />
    </>
  );
}

/** The single-column primary key of a table, or null (none, or several columns). */
export function primaryKey(columns: PgColumn[] | undefined): string | null {
  const keys = columns?.filter((c) => c.pk) ?? [];
  return keys.length === 1 ? keys[0].name : null;
}
