import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { CONTROL } from '../../components/QueryControls';
import { SqlAction } from '../../components/SqlAction';
import { Button, Card, ErrorNotice, Loading } from '../../components/ui';
import { api } from '../../lib/api';
import {
  addColumnSql,
  type ColumnSpec,
  column,
  columnsProblem,
  dropColumnSql,
  dropTableSql,
  isOwnerDefault,
  renameColumnSql,
  TABLE_COLUMNS_SQL,
  type TableColumn,
} from '../../lib/ddl';
import type { TableDoc } from '../../lib/openapi';
import { useRights } from '../../lib/roles';
import { ColumnForm, ColumnTypes } from './ColumnForm';

type Change =
  | { kind: 'add'; spec: ColumnSpec }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'drop'; name: string }
  | { kind: 'drop-table'; typed: string };

/** A table's columns as the catalog has them, read through the SQL runner. */
export function useStructure(table: string) {
  return useQuery({
    queryKey: ['table-structure', table],
    queryFn: async () => (await api.sql(TABLE_COLUMNS_SQL, [table])).results[0].rows as unknown as TableColumn[],
  });
}

/**
 * The table editor of an existing table: its columns (type, default, required, unique, key,
 * reference), add / rename / drop a column, drop the table after typing its name. Each change
 * shows its SQL and runs through the SQL runner.
 */
export function Structure({ table, tables }: { table: string; tables: TableDoc[] }) {
  const navigate = useNavigate();
  const structure = useStructure(table);
  // A viewer reads the columns only: no column or table changes (the server would refuse them).
  const rights = useRights();
  const [change, setChange] = useState<Change | null>(null);

  let sql: string | null = null;
  let problem: string | null = null;
  try {
    if (change?.kind === 'add') {
      problem = columnsProblem([change.spec]);
      if (!problem && structure.data?.some((c) => c.name === change.spec.name)) problem = `There is already a column ${change.spec.name}.`;
      if (!problem) sql = addColumnSql(table, change.spec);
    } else if (change?.kind === 'rename') {
      problem = change.to.trim() ? null : 'Type the new name.';
      if (!problem) sql = renameColumnSql(table, change.from, change.to.trim());
    } else if (change?.kind === 'drop') sql = dropColumnSql(table, change.name);
    else if (change?.kind === 'drop-table') {
      problem = change.typed === table ? null : `Type ${table} to confirm.`;
      sql = problem ? null : dropTableSql(table);
    }
  } catch (err) {
    problem = (err as Error).message;
  }
  const done = () => setChange(null);

  return (
    <div className="space-y-4">
      <Card
        title="Columns"
        actions={
          rights.change && (
            <Button onClick={() => setChange({ kind: 'add', spec: column('', 'text') })} disabled={change?.kind === 'add'}>
              New column
            </Button>
          )
        }
      >
        {structure.isLoading && <Loading label="Reading the columns" />}
        {structure.error && <ErrorNotice error={structure.error} retry={() => void structure.refetch()} />}
        {structure.data && (
          <div className="overflow-x-auto">
            <table className="w-full text-left text-sm">
              <thead className="text-xs text-fg-muted">
                <tr>
                  <th className="py-1 pr-3 font-medium">Column</th>
                  <th className="py-1 pr-3 font-medium">Type</th>
                  <th className="py-1 pr-3 font-medium">Default</th>
                  <th className="py-1 pr-3 font-medium">Rules</th>
                  <th className="py-1 font-medium">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {structure.data.map((c) => (
                  <tr key={c.name} className="border-t border-line align-middle">
                    <td className="py-1.5 pr-3 font-mono">{c.name}</td>
                    <td className="py-1.5 pr-3 font-mono text-fg-muted">{c.type}</td>
                    <td className="py-1.5 pr-3 font-mono text-xs text-fg-muted">
                      {isOwnerDefault(c.default_expr) ? 'auth.uid() (the signed-in user)' : (c.default_expr ?? '—')}
                    </td>
                    <td className="py-1.5 pr-3 text-xs">
                      {[
                        c.pk && 'primary key',
                        !c.nullable && !c.pk && 'required',
                        c.unique && 'unique',
                        c.fk_table &&
                          `→ ${c.fk_table}.${c.fk_column}${c.fk_on_delete && c.fk_on_delete !== 'no action' ? ` (on delete ${c.fk_on_delete})` : ''}`,
                      ]
                        .filter(Boolean)
                        .join(' · ') || 'nullable'}
                    </td>
                    <td className="py-1 text-right whitespace-nowrap">
                      {rights.change && (
                        <>
                          <Button
                            variant="ghost"
                            aria-label={`Rename ${c.name}`}
                            onClick={() => setChange({ kind: 'rename', from: c.name, to: c.name })}
                          >
                            Rename
                          </Button>
                          <Button variant="ghost" aria-label={`Drop ${c.name}`} onClick={() => setChange({ kind: 'drop', name: c.name })}>
                            Drop
                          </Button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {change && change.kind !== 'drop-table' && (
        <Card
          title={
            change.kind === 'add' ? 'Add a column' : change.kind === 'rename' ? `Rename ${change.from}` : `Drop the column ${change.name}`
          }
        >
          <div className="space-y-3">
            {change.kind === 'add' && (
              <>
                <ColumnTypes />
                <ColumnForm value={change.spec} existing tables={tables} onChange={(spec) => setChange({ kind: 'add', spec })} />
              </>
            )}
            {change.kind === 'rename' && (
              <label className="flex flex-col gap-1 text-sm">
                <span className="font-medium">New name of {change.from}</span>
                <input
                  value={change.to}
                  onChange={(e) => setChange({ ...change, to: e.target.value })}
                  className={`${CONTROL} w-72 font-mono`}
                />
              </label>
            )}
            {change.kind === 'drop' && (
              <p className="text-sm">Its values in every row are deleted. Policies or views that use it must be changed first.</p>
            )}
            <SqlAction
              sql={sql}
              problem={problem}
              run={change.kind === 'add' ? 'Add column' : change.kind === 'rename' ? 'Rename column' : 'Drop column'}
              variant={change.kind === 'drop' ? 'danger' : 'primary'}
              onDone={done}
            >
              <Button onClick={done}>Cancel</Button>
            </SqlAction>
          </div>
        </Card>
      )}
      {rights.change && (
        <Card title="Danger zone">
          {change?.kind === 'drop-table' ? (
            <div className="space-y-3">
              <label className="flex flex-col gap-1 text-sm">
                <span className="font-medium">
                  Type <code>{table}</code> to drop the table and all its rows
                </span>
                <input
                  value={change.typed}
                  onChange={(e) => setChange({ kind: 'drop-table', typed: e.target.value })}
                  className={`${CONTROL} w-72 font-mono`}
                  autoComplete="off"
                />
              </label>
              <SqlAction
                sql={sql}
                problem={problem}
                run="Drop table"
                variant="danger"
                onDone={() => void navigate({ to: '/data', search: {} })}
              >
                <Button onClick={done}>Cancel</Button>
              </SqlAction>
            </div>
          ) : (
            <Button variant="danger" onClick={() => setChange({ kind: 'drop-table', typed: '' })}>
              Drop table…
            </Button>
          )}
        </Card>
      )}
    </div>
  );
}
