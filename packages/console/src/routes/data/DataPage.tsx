import { createClient, type PlinthClient, type RestResult } from '@plinth/sdk';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useEffect, useMemo, useState } from 'react';
import { CONTROL, FilterEditor } from '../../components/QueryControls';
import { Button, Confirm, Dialog, ErrorNotice, Loading, Notice, TextArea } from '../../components/ui';
import { ApiFailure, serverUrl } from '../../lib/api';
import { type FilterRow, filterSteps, type OrderRow, orderSteps, runChain, type Step } from '../../lib/rest';
import { useApiDoc, useTableColumns } from '../../lib/schema';
import { type DataSearch, PAGE_SIZES } from '../../lib/search';
import { type Editing, Grid } from './Grid';
import { InsertRow } from './InsertRow';
import { cellText, parseEdit } from './values';

type Row = Record<string, unknown>;
type Refusal = { code: string; message: string };

const refusalOf = (res: RestResult<unknown>): Refusal | null => (res.error ? { code: res.error.code, message: res.error.message } : null);

/**
 * `/console/data` and `/console/data/{table}`: the rows of any exposed table through the REST
 * API as the secret key (kept in memory only), with server-side filters, sort and pages, the
 * total count, and edits, inserts and deletes whose refusals show the server's code and message.
 */
export function DataPage() {
  const { table } = useParams({ strict: false }) as { table?: string };
  const search = useSearch({ strict: false }) as DataSearch;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { keys, doc, error: docError, isLoading } = useApiDoc();
  const tableDoc = doc.data?.tables.find((t) => t.name === table);
  const columns = useTableColumns(tableDoc?.name, tableDoc?.columns.map((c) => c.name).join(',') ?? '');
  const client = useMemo<PlinthClient | null>(
    () =>
      keys.data
        ? createClient(serverUrl, keys.data.secret_key, { auth: { persistSession: false, autoRefreshToken: false, multiTab: false } })
        : null,
    [keys.data],
  );

  const size = search.size ?? 100;
  const page = search.page ?? 1;
  const filters = search.f ?? [];
  const pk = columns.data?.filter((c) => c.pk).length === 1 ? (columns.data.find((c) => c.pk)?.name ?? null) : null;
  const writable = Boolean(pk && tableDoc?.ops.includes('update'));
  // Without an order of its own, a page is in key order: rows stay in place when edited.
  const order: OrderRow[] = search.order ?? (pk ? [[pk, 'asc']] : []);

  const rows = useQuery({
    queryKey: ['rows', table, filters, order, page, size],
    enabled: Boolean(client && tableDoc),
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const where = filterSteps(filters, tableDoc?.columns ?? []);
      if ('error' in where) throw new ApiFailure('invalid_filter', where.error, 400);
      const steps: Step[] = [
        { method: 'select', args: ['*', { count: 'exact' }] },
        ...where.steps,
        ...orderSteps(order),
        { method: 'limit', args: [size] },
        { method: 'offset', args: [(page - 1) * size] },
      ];
      const res = await runChain<RestResult<Row[]>>(client as PlinthClient, table ?? '', steps);
      if (res.error) throw new ApiFailure(res.error.code, res.error.message, res.status, res.error.details);
      return { rows: res.data ?? [], count: res.count ?? 0 };
    },
  });

  const [draft, setDraft] = useState<FilterRow[]>(filters);
  const filterKey = JSON.stringify(filters);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the URL's filters (by value) reset the draft
  useEffect(() => setDraft(filters), [filterKey, table]);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [jsonEdit, setJsonEdit] = useState<Editing | null>(null);
  const [jsonError, setJsonError] = useState<string | null>(null);
  // Boxed, so a key that is itself null or 0 still means "a row is being deleted".
  const [deleting, setDeleting] = useState<{ key: unknown } | null>(null);
  const [inserting, setInserting] = useState(false);
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<{ kind: 'ok'; text: string } | { kind: 'error'; refusal: Refusal } | null>(null);

  const go = (patch: Partial<DataSearch>) => void navigate({ to: '.', search: (prev: DataSearch) => ({ ...prev, ...patch }) } as never);
  const list = rows.data?.rows ?? [];
  const total = rows.data?.count ?? 0;
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['rows', table] });

  async function save(e: Editing, asNull = false) {
    if (!client || !pk || !table) return;
    const col = columns.data?.find((c) => c.name === e.column);
    const parsed = asNull ? { value: null } : parseEdit(e.text, col?.type ?? 'text');
    if ('error' in parsed) {
      setJsonError(parsed.error);
      return;
    }
    setSaving(true);
    try {
      const res = await client
        .from(table)
        .update({ [e.column]: parsed.value })
        .eq(pk, e.key as never);
      const refused = refusalOf(res);
      if (refused) {
        setOutcome({ kind: 'error', refusal: refused });
        return;
      }
      const changed = Array.isArray(res.data) ? res.data.length : 0;
      setOutcome(
        changed === 1
          ? { kind: 'ok', text: `Saved ${e.column} of ${pk} ${cellText(e.key)}.` }
          : { kind: 'error', refusal: { code: 'not_found', message: 'No row was changed: it is gone. The page is read again.' } },
      );
      setEditing(null);
      setJsonEdit(null);
      setJsonError(null);
      await refresh();
    } finally {
      setSaving(false);
    }
  }

  async function remove(key: unknown) {
    if (!client || !pk || !table) return;
    setDeleting(null);
    const res = await client
      .from(table)
      .delete()
      .eq(pk, key as never);
    const refused = refusalOf(res);
    setOutcome(refused ? { kind: 'error', refusal: refused } : { kind: 'ok', text: `Deleted the row with ${pk} ${cellText(key)}.` });
    await refresh();
  }

  async function insert(row: Row): Promise<Refusal | null> {
    if (!client || !table) return null;
    const res = await client.from(table).insert(row);
    const refused = refusalOf(res);
    if (!refused) {
      setOutcome({ kind: 'ok', text: 'Inserted a row.' });
      await refresh();
    }
    return refused;
  }

  function sort(column: string) {
    const current = search.order?.find(([c]) => c === column)?.[1];
    const next: OrderRow[] | undefined = current === 'asc' ? [[column, 'desc']] : current === 'desc' ? undefined : [[column, 'asc']];
    go({ order: next, page: undefined });
  }

  const first = total ? (page - 1) * size + 1 : 0;
  const last = Math.min(total, page * size);
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">Table browser</h1>
        {doc.data && (
          <label className="flex items-center gap-2 text-sm">
            Table
            <select
              className={CONTROL}
              value={table ?? ''}
              onChange={(e) => void navigate({ to: '/data/$table', params: { table: e.target.value }, search: {} })}
            >
              {!table && <option value="">Choose…</option>}
              {doc.data.tables.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        {table && writable && (
          <Button variant="primary" onClick={() => setInserting(true)}>
            Insert row
          </Button>
        )}
      </div>
      {docError && <ErrorNotice error={docError} />}
      {isLoading && <Loading label="Reading the tables" />}
      {!table && doc.data && (
        <ul className="grid gap-2 sm:grid-cols-3">
          {doc.data.tables.map((t) => (
            <li key={t.name}>
              <Link
                to="/data/$table"
                params={{ table: t.name }}
                className="block rounded-md border border-line bg-surface px-3 py-2 font-mono hover:bg-muted"
              >
                {t.name}
              </Link>
            </li>
          ))}
          {doc.data.tables.length === 0 && <li className="text-sm text-fg-muted">No table in the public schema yet.</li>}
        </ul>
      )}
      {table && doc.data && !tableDoc && <Notice kind="warn">No table or view "{table}" is exposed by the REST API.</Notice>}
      {tableDoc && (
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
              {tableDoc.ops.includes('update') ? 'No single-column primary key' : 'A view'}: rows are shown read-only here (the SQL runner
              can change them).
            </p>
          )}
          {outcome?.kind === 'error' && (
            <Notice kind="error" title="The server refused">
              <code data-testid="refusal-code">{outcome.refusal.code}</code>: {outcome.refusal.message}
            </Notice>
          )}
          {outcome?.kind === 'ok' && <Notice kind="ok">{outcome.text}</Notice>}
          {rows.error && <ErrorNotice error={rows.error} retry={() => void rows.refetch()} />}
          {rows.isLoading && <Loading label="Loading rows" />}
          {rows.data && columns.data && (
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
                table={tableDoc.name}
                resetKey={`${table}|${filterKey}|${JSON.stringify(order)}|${page}|${size}`}
                columns={columns.data}
                rows={list}
                pk={writable ? pk : null}
                order={order}
                onSort={sort}
                editing={editing}
                onEdit={setEditing}
                onSave={(e, asNull) => void save(e, asNull)}
                onOpenJson={(e) => {
                  setJsonError(null);
                  setJsonEdit(e);
                }}
                onDelete={(key) => setDeleting({ key })}
                saving={saving}
              />
            </>
          )}
          <InsertRow table={tableDoc.name} columns={columns.data ?? []} open={inserting} onOpenChange={setInserting} onInsert={insert} />
          <Dialog
            title={jsonEdit ? `Edit ${jsonEdit.column}` : 'Edit'}
            open={jsonEdit !== null}
            onOpenChange={(o) => !o && setJsonEdit(null)}
          >
            {jsonEdit && (
              <div className="space-y-3">
                <TextArea
                  label={`${jsonEdit.column} of ${pk} ${cellText(jsonEdit.key)} (JSON)`}
                  rows={12}
                  spellCheck={false}
                  value={jsonEdit.text}
                  onChange={(e) => setJsonEdit({ ...jsonEdit, text: e.target.value })}
                  errors={jsonError ? [jsonError] : []}
                />
                <div className="flex justify-end gap-2">
                  <Button onClick={() => setJsonEdit(null)}>Cancel</Button>
                  {columns.data?.find((c) => c.name === jsonEdit.column)?.nullable && (
                    <Button disabled={saving} onClick={() => void save(jsonEdit, true)}>
                      Set NULL
                    </Button>
                  )}
                  <Button variant="primary" disabled={saving} onClick={() => void save(jsonEdit)}>
                    Save
                  </Button>
                </div>
              </div>
            )}
          </Dialog>
          <Confirm
            title="Delete this row?"
            description={
              deleting !== null && pk ? `The row with ${pk} ${cellText(deleting.key)} is deleted from ${table}. This cannot be undone.` : ''
            }
            confirm="Delete row"
            open={deleting !== null}
            onOpenChange={(o) => !o && setDeleting(null)}
            onConfirm={() => deleting !== null && void remove(deleting.key)}
          />
        </>
      )}
    </div>
  );
}
