import { createClient, type PlinthClient } from '@plinth/sdk';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useMemo, useState } from 'react';
import { CONTROL } from '../../components/QueryControls';
import { Button, EmptyState, ErrorNotice, Loading, Notice, Tabs } from '../../components/ui';
import { type PgColumn, serverUrl } from '../../lib/api';
import { isOwnerDefault } from '../../lib/ddl';
import { useApiDoc, useTableColumns } from '../../lib/schema';
import { useRights } from '../../lib/roles';
import { DATA_VIEWS, type DataIndexSearch, type DataSearch } from '../../lib/search';
import { CreateTable } from './CreateTable';
import { Structure, useStructure } from './Structure';
import { primaryKey, TableRows } from './TableRows';

// The policy editor is its own chunk (shared with the bucket page), loaded with its tab.
const PolicyEditor = lazy(() => import('../../components/PolicyEditor').then((m) => ({ default: m.PolicyEditor })));
const Realtime = lazy(() => import('./Realtime').then((m) => ({ default: m.Realtime })));

const VIEW_LABELS = { rows: 'Rows', structure: 'Columns', policies: 'Policies', realtime: 'Realtime' } as const;

/** The SDK's requests without their key headers, with the console's: the admin cookie decides. */
const cookieFetch: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.delete('apikey');
  headers.delete('authorization');
  headers.set('x-plinth-admin', '1');
  return fetch(input, { ...init, headers, credentials: 'same-origin' });
};

/**
 * `/console/data` and `/console/data/{table}`: the tables, a new table (`?create=true`), and
 * per table its rows (through the REST API as the secret key, kept in memory only), its
 * columns (the table editor) and its policies (the policy editor), one tab each (`?view=`).
 */
export function DataPage() {
  const { table } = useParams({ strict: false }) as { table?: string };
  const search = useSearch({ strict: false }) as DataSearch & DataIndexSearch;
  const navigate = useNavigate();
  // A viewer reads only: no insert, no new table (the server would refuse them).
  const { change } = useRights();
  const { keys, doc, error: docError, isLoading } = useApiDoc();
  const tableDoc = doc.data?.tables.find((t) => t.name === table);
  const columns = useTableColumns(tableDoc?.name, tableDoc?.columns.map((c) => c.name).join(',') ?? '');
  // PostgreSQL's own column list comes through the SQL runner, which a viewer may not use: the
  // rows are then shown with the columns the API document names (read only: no key is known).
  const shownColumns = useMemo<PgColumn[] | undefined>(
    () =>
      columns.data ??
      (columns.error && tableDoc
        ? tableDoc.columns.map((c) => ({
            name: c.name,
            type: c.type,
            nullable: c.nullable,
            has_default: !c.required,
            default_expr: null,
            pk: false,
          }))
        : undefined),
    [columns.data, columns.error, tableDoc],
  );
  const client = useMemo<PlinthClient | null>(() => {
    if (!keys.data) return null;
    const auth = { persistSession: false, autoRefreshToken: false, multiTab: false };
    if (keys.data.secret_key) return createClient(serverUrl, keys.data.secret_key, { auth });
    // A role without the secret key (developer, viewer): the console's cookie, with no key at
    // all, which the REST API takes as the secret key under the cookie's rule (a viewer reads only).
    return createClient(serverUrl, keys.data.public_key, { auth, fetch: cookieFetch });
  }, [keys.data]);
  const [inserting, setInserting] = useState(false);
  const writable = Boolean(primaryKey(columns.data) && tableDoc?.ops.includes('update'));
  const view = search.view ?? 'rows';
  const isTable = tableDoc?.ops.includes('create') ?? false;
  const tables = doc.data?.tables ?? [];
  const setCreate = (create: boolean) => void navigate({ to: '/data', search: create ? { create: true } : {} });

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">Table browser</h1>
        {doc.data && tables.length > 0 && (
          <label className="flex items-center gap-2 text-sm">
            Table
            <select
              className={CONTROL}
              value={table ?? ''}
              onChange={(e) => void navigate({ to: '/data/$table', params: { table: e.target.value }, search: {} })}
            >
              {!table && <option value="">Choose…</option>}
              {tables.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        {table && writable && change && view === 'rows' && (
          <Button variant="primary" onClick={() => setInserting(true)}>
            Insert row
          </Button>
        )}
        {!table && !search.create && change && tables.length > 0 && (
          <Button variant="primary" onClick={() => setCreate(true)}>
            New table
          </Button>
        )}
      </div>
      {docError && <ErrorNotice error={docError} />}
      {isLoading && <Loading label="Reading the tables" />}
      {!table && search.create && change && doc.data && <CreateTable tables={tables} onClose={() => setCreate(false)} />}
      {!table && !search.create && doc.data && (
        <ul className="grid gap-2 sm:grid-cols-3">
          {tables.map((t) => (
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
          {tables.length === 0 && (
            <li className="sm:col-span-3">
              <EmptyState
                title="No table yet"
                action={
                  change && (
                    <Button variant="primary" onClick={() => setCreate(true)}>
                      New table
                    </Button>
                  )
                }
              >
                {change ? (
                  <>
                    Make your first table with <strong>New table</strong>: name it, add its columns, and one click adds an owner column so
                    each user sees only their rows. No SQL needed (the SQL runner is there when you want it).
                  </>
                ) : (
                  'The project has no table for the REST API yet.'
                )}
              </EmptyState>
            </li>
          )}
        </ul>
      )}
      {table && doc.data && !tableDoc && <Notice kind="warn">No table or view "{table}" is exposed by the REST API.</Notice>}
      {tableDoc && (
        <Tabs
          label={`Views of ${tableDoc.name}`}
          value={view}
          onChange={(v) =>
            void navigate({ to: '.', search: (prev: DataSearch) => ({ ...prev, view: v === 'rows' ? undefined : v }) } as never)
          }
          tabs={DATA_VIEWS.filter((v) => isTable || v === 'rows').map((v) => [
            v,
            VIEW_LABELS[v],
            v === view ? (
              v === 'rows' ? (
                <div key="rows" className="space-y-4">
                  <TableRows client={client} tableDoc={tableDoc} columns={shownColumns} inserting={inserting} setInserting={setInserting} />
                </div>
              ) : v === 'structure' ? (
                <Structure key="structure" table={tableDoc.name} tables={tables} />
              ) : v === 'realtime' ? (
                <Suspense key="realtime" fallback={<Loading label="Loading the live view" />}>
                  <Realtime table={tableDoc.name} />
                </Suspense>
              ) : (
                <TablePolicies key="policies" table={tableDoc.name} />
              )
            ) : null,
          ])}
        />
      )}
    </div>
  );
}

function TablePolicies({ table }: { table: string }) {
  const structure = useStructure(table);
  const owner = structure.data?.find((c) => isOwnerDefault(c.default_expr))?.name ?? null;
  return (
    <Suspense fallback={<Loading label="Loading the policy editor" />}>
      <PolicyEditor target={{ kind: 'table', table }} columns={structure.data?.map((c) => c.name) ?? []} ownerGuess={owner} />
    </Suspense>
  );
}
