import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { SqlAction } from '../../components/SqlAction';
import { Button, Card, Field } from '../../components/ui';
import { type ColumnSpec, column, columnsProblem, createTableSql, DEFAULTS, ownerColumn, STARTER_COLUMNS } from '../../lib/ddl';
import type { TableDoc } from '../../lib/openapi';
import { ColumnForm, ColumnTypes } from './ColumnForm';

/**
 * "New table": a name and its columns (an identity key and a creation time to start with),
 * "Add owner column" in one click (`uuid not null default auth.uid()`, row-level security and
 * the owner policy), the CREATE TABLE shown as it is edited and run through the SQL runner.
 */
export function CreateTable({ tables, onClose }: { tables: TableDoc[]; onClose: () => void }) {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [columns, setColumns] = useState<ColumnSpec[]>(STARTER_COLUMNS);
  const [ownerPolicy, setOwnerPolicy] = useState(true);
  const owner = columns.find((c) => c.type === 'uuid' && c.default === DEFAULTS.owner);
  const problem = !name.trim()
    ? 'Give the table a name.'
    : tables.some((t) => t.name === name)
      ? `There is already a table ${name}.`
      : columnsProblem(columns);
  let sql: string | null = null;
  let sqlProblem = problem;
  if (!problem) {
    try {
      sql = createTableSql(name.trim(), columns, owner && ownerPolicy ? owner.name : null);
    } catch (err) {
      sqlProblem = (err as Error).message;
    }
  }
  const setAt = (i: number, c: ColumnSpec) => setColumns(columns.map((x, j) => (j === i ? c : x)));

  return (
    <Card title="New table" actions={<Button onClick={onClose}>Cancel</Button>}>
      <div className="space-y-3">
        <Field label="Table name" value={name} onChange={(e) => setName(e.target.value)} placeholder="notes" className="max-w-sm" />
        <ColumnTypes />
        <fieldset className="space-y-2" aria-label="Columns">
          <div
            aria-hidden="true"
            className="hidden gap-2 px-2 text-xs font-medium text-fg-muted lg:grid lg:grid-cols-[minmax(8rem,1fr)_8rem_minmax(10rem,1fr)_auto]"
          >
            <span>Column</span>
            <span>Type</span>
            <span>Default</span>
            <span className="w-72">Rules</span>
          </div>
          {columns.map((c, i) => (
            <ColumnForm
              // biome-ignore lint/suspicious/noArrayIndexKey: columns are edited in place, their names change as typed
              key={i}
              value={c}
              tables={tables}
              onChange={(next) => setAt(i, next)}
              onRemove={() => setColumns(columns.filter((_, j) => j !== i))}
            />
          ))}
        </fieldset>
        <div className="flex flex-wrap items-center gap-2">
          <Button onClick={() => setColumns([...columns, column('', 'text')])}>Add column</Button>
          <Button disabled={Boolean(owner)} onClick={() => setColumns([...columns, ownerColumn()])}>
            Add owner column
          </Button>
          {owner && (
            <label className="inline-flex items-center gap-1.5 text-sm">
              <input type="checkbox" checked={ownerPolicy} onChange={(e) => setOwnerPolicy(e.target.checked)} />
              Turn on row-level security with the owner policy (each signed-in user reads and writes only their rows)
            </label>
          )}
        </div>
        {owner && (
          <p className="text-xs text-fg-muted">
            <code>{owner.name}</code> is filled with the id of the signed-in user who adds the row. With the secret key there is no
            signed-in user: the table browser asks you whose row it is.
          </p>
        )}
        <SqlAction
          sql={sql}
          problem={sqlProblem}
          run="Create table"
          onDone={() => {
            onClose();
            void navigate({ to: '/data/$table', params: { table: name.trim() }, search: {} });
          }}
        />
      </div>
    </Card>
  );
}
