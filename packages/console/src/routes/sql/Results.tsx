import { useState } from 'react';
import { CopyButton, Tabs } from '../../components/ui';
import type { SqlResult } from '../../lib/api';

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** RFC 4180 CSV of a result: a header of column names, fields quoted when they need it. */
export function toCsv(r: SqlResult): string {
  const cell = (v: unknown) => {
    const s = text(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [r.columns.map((c) => cell(c.name)).join(','), ...r.rows.map((row) => r.columns.map((c) => cell(row[c.name])).join(','))].join(
    '\r\n',
  );
}

function summary(r: SqlResult): string {
  if (!r.columns.length) return `${r.command}${r.rowCount ? ` · ${r.rowCount} row${r.rowCount === 1 ? '' : 's'}` : ''}`;
  if (r.truncated) return `${r.rows.length} of ${r.rowCount} rows (the first ${r.rows.length} are shown)`;
  return `${r.rowCount} row${r.rowCount === 1 ? '' : 's'}`;
}

function Grid({ r, index }: { r: SqlResult; index: number }) {
  if (!r.columns.length) return <p className="text-sm text-fg-muted">No rows returned.</p>;
  return (
    <div className="max-h-[28rem] overflow-auto rounded-md border border-line">
      <table className="w-full border-collapse text-left font-mono text-xs" aria-label={`Result ${index + 1}: ${r.command}`}>
        <thead className="sticky top-0 bg-muted">
          <tr>
            {r.columns.map((c) => (
              <th key={c.name} scope="col" className="border-b border-line px-2 py-1 font-semibold">
                <span>{c.name}</span> <span className="font-normal text-fg-muted">{c.type}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {r.rows.map((row, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own
            <tr key={i} className="odd:bg-surface even:bg-muted/40">
              {r.columns.map((c) => (
                <td key={c.name} className="max-w-[28rem] truncate border-b border-line/60 px-2 py-0.5 align-top">
                  {row[c.name] === null ? <span className="text-fg-muted">NULL</span> : text(row[c.name])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * One tab per statement: command, row count ("1000 of N" when truncated), grid, copy as CSV or
 * JSON. The last statement's tab is open first (a script's last select is usually the point);
 * the page gives each run a new `key`, so a new run opens its last tab again.
 */
export function Results({ results, durationMs }: { results: SqlResult[]; durationMs: number }) {
  const [tab, setTab] = useState(String(Math.max(0, results.length - 1)));
  const current = Number(tab) < results.length ? tab : '0';
  return (
    <div>
      <p role="status" className="mb-2 text-sm text-fg-muted">
        {results.length} statement{results.length === 1 ? '' : 's'} ran in {durationMs} ms.
      </p>
      <Tabs
        label="Results, one per statement"
        value={current}
        onChange={setTab}
        tabs={results.map((r, i) => [
          String(i),
          `${i + 1}. ${r.command}`,
          <div key={String(i)} className="space-y-2">
            <div className="flex flex-wrap items-center gap-2">
              <span className="text-sm" data-testid="result-summary">
                {summary(r)}
              </span>
              {r.columns.length > 0 && (
                <span className="ml-auto flex gap-2">
                  <CopyButton value={toCsv(r)} label={`Copy result ${i + 1} as CSV`} text="Copy CSV" />
                  <CopyButton value={JSON.stringify(r.rows, null, 2)} label={`Copy result ${i + 1} as JSON`} text="Copy JSON" />
                </span>
              )}
            </div>
            <Grid r={r} index={i} />
          </div>,
        ])}
      />
    </div>
  );
}
