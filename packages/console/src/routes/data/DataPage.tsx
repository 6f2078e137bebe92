import { createClient, type PlinthClient } from '@plinth/sdk';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { CONTROL } from '../../components/QueryControls';
import { Button, ErrorNotice, Loading, Notice } from '../../components/ui';
import { serverUrl } from '../../lib/api';
import { useApiDoc, useTableColumns } from '../../lib/schema';
import { primaryKey, TableRows } from './TableRows';

/**
 * `/console/data` and `/console/data/{table}`: the rows of any exposed table through the REST
 * API as the secret key (kept in memory only). This file is the frame (the table chosen, the
 * list of tables); the rows and their edits are `TableRows.tsx`.
 */
export function DataPage() {
  const { table } = useParams({ strict: false }) as { table?: string };
  const navigate = useNavigate();
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
  const [inserting, setInserting] = useState(false);
  const writable = Boolean(primaryKey(columns.data) && tableDoc?.ops.includes('update'));

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
        <TableRows client={client} tableDoc={tableDoc} columns={columns.data} inserting={inserting} setInserting={setInserting} />
      )}
    </div>
  );
}
