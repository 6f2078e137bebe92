import { FILTER_OPERATORS, type FilterOperator } from '@plinth/shared';
import { useId } from 'react';
import { type FilterRow, IS_VALUES, type OrderRow } from '../lib/rest';
import { Button } from './ui';

/**
 * The filter and order rows of a database request, shared by the API explorer and the table
 * browser. A column is typed with suggestions (not chosen from a closed list): a name the table
 * lacks goes to the server, which answers with its own error, as an app's request would.
 */

export const CONTROL = 'rounded-md border border-line bg-surface px-2 py-1 text-sm text-fg';

const OP_LABEL: Record<FilterOperator, string> = {
  eq: 'eq (=)',
  neq: 'neq (≠)',
  gt: 'gt (>)',
  lt: 'lt (<)',
  gte: 'gte (≥)',
  lte: 'lte (≤)',
  like: 'like',
  ilike: 'ilike',
  in: 'in (list)',
  is: 'is',
};

const HINT: Partial<Record<FilterOperator, string>> = {
  like: '% or * any text, _ one character',
  ilike: '% or * any text, _ one character',
  in: 'a,b,"c,with comma"',
};

export function FilterEditor({ rows, columns, onChange }: { rows: FilterRow[]; columns: string[]; onChange: (rows: FilterRow[]) => void }) {
  const list = useId();
  const set = (i: number, row: FilterRow) => onChange(rows.map((r, j) => (j === i ? row : r)));
  return (
    <fieldset className="space-y-2">
      <legend className="mb-1 text-sm font-medium">Filters</legend>
      <datalist id={list}>
        {columns.map((c) => (
          <option key={c} value={c} />
        ))}
      </datalist>
      {rows.map(([op, column, value], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and have no identity of their own
        <div key={i} className="flex flex-wrap items-center gap-2">
          <input
            aria-label={`Filter ${i + 1} column`}
            list={list}
            value={column}
            placeholder="column"
            onChange={(e) => set(i, [op, e.target.value, value])}
            className={`${CONTROL} w-40 font-mono`}
          />
          <select
            aria-label={`Filter ${i + 1} operator`}
            value={op}
            onChange={(e) => {
              const next = e.target.value as FilterOperator;
              set(i, [next, column, next === 'is' ? 'null' : value]);
            }}
            className={CONTROL}
          >
            {FILTER_OPERATORS.map((o) => (
              <option key={o} value={o}>
                {OP_LABEL[o]}
              </option>
            ))}
          </select>
          {op === 'is' ? (
            <select
              aria-label={`Filter ${i + 1} value`}
              value={value}
              onChange={(e) => set(i, [op, column, e.target.value])}
              className={CONTROL}
            >
              {IS_VALUES.map((v) => (
                <option key={v}>{v}</option>
              ))}
            </select>
          ) : (
            <input
              aria-label={`Filter ${i + 1} value`}
              value={value}
              placeholder={HINT[op] ?? 'value'}
              onChange={(e) => set(i, [op, column, e.target.value])}
              className={`${CONTROL} min-w-40 flex-1 font-mono`}
            />
          )}
          <Button variant="ghost" aria-label={`Remove filter ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            ✕
          </Button>
        </div>
      ))}
      <Button onClick={() => onChange([...rows, ['eq', '', '']])}>Add filter</Button>
    </fieldset>
  );
}

export function OrderEditor({ rows, columns, onChange }: { rows: OrderRow[]; columns: string[]; onChange: (rows: OrderRow[]) => void }) {
  const list = useId();
  const set = (i: number, row: OrderRow) => onChange(rows.map((r, j) => (j === i ? row : r)));
  return (
    <fieldset className="space-y-2">
      <legend className="mb-1 text-sm font-medium">Order</legend>
      <datalist id={list}>
        {columns.map((c) => (
          <option key={c} value={c} />
        ))}
      </datalist>
      {rows.map(([column, dir, nulls], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and have no identity of their own
        <div key={i} className="flex flex-wrap items-center gap-2">
          <input
            aria-label={`Order ${i + 1} column`}
            list={list}
            value={column}
            placeholder="column"
            onChange={(e) => set(i, nulls ? [e.target.value, dir, nulls] : [e.target.value, dir])}
            className={`${CONTROL} w-40 font-mono`}
          />
          <select
            aria-label={`Order ${i + 1} direction`}
            value={dir}
            onChange={(e) => set(i, nulls ? [column, e.target.value as 'asc', nulls] : [column, e.target.value as 'asc'])}
            className={CONTROL}
          >
            <option value="asc">ascending</option>
            <option value="desc">descending</option>
          </select>
          <select
            aria-label={`Order ${i + 1} nulls`}
            value={nulls ?? ''}
            onChange={(e) => set(i, e.target.value ? [column, dir, e.target.value as 'first'] : [column, dir])}
            className={CONTROL}
          >
            <option value="">nulls: default</option>
            <option value="first">nulls first</option>
            <option value="last">nulls last</option>
          </select>
          <Button variant="ghost" aria-label={`Remove order ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            ✕
          </Button>
        </div>
      ))}
      <Button onClick={() => onChange([...rows, ['', 'asc']])}>Add sort column</Button>
    </fieldset>
  );
}
