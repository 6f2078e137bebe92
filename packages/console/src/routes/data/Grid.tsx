import { type KeyboardEvent, type ReactNode, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Button } from '../../components/ui';
import type { PgColumn } from '../../lib/api';
import type { OrderRow } from '../../lib/rest';
import { cellText, editText, isJsonType } from './values';

/** Row height in pixels: fixed, so the window of rendered rows follows from the scroll offset alone. */
export const ROW_HEIGHT = 32;
const OVERSCAN = 8;

/**
 * Which rows to render for a scroll position: the visible ones plus a margin. A small
 * virtualizer of our own (fixed row height) instead of a package: ~30 lines.
 * @example visibleRange(0, 640, 1000) // { first: 0, last: 28 }
 */
export function visibleRange(scrollTop: number, viewport: number, count: number): { first: number; last: number } {
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(count, Math.ceil((scrollTop + viewport) / ROW_HEIGHT) + OVERSCAN);
  return { first, last };
}

/** A cell being edited, named by its row's key (never by its position: a refetch may reorder rows). */
export interface Editing {
  key: unknown;
  column: string;
  text: string;
}

interface GridProps {
  table: string;
  /** Changes when another page of rows is shown. */
  resetKey: string;
  columns: PgColumn[];
  rows: Array<Record<string, unknown>>;
  /** The key column, when rows can be edited and deleted. */
  pk: string | null;
  order: OrderRow[];
  onSort: (column: string) => void;
  editing: Editing | null;
  onEdit: (e: Editing | null) => void;
  onSave: (e: Editing, asNull?: boolean) => void;
  onOpenJson: (e: Editing) => void;
  onDelete: (key: unknown) => void;
  saving: boolean;
}

/** The rows of one page in a virtualized grid: sortable headers with types, cells editable in place. */
export function Grid(props: GridProps) {
  const { columns, rows, pk, editing } = props;
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(640);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    setViewport(el.clientHeight);
    const ro = new ResizeObserver(() => setViewport(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  // A new page (or other filters, order, table) starts at its top; an edit keeps the place.
  // biome-ignore lint/correctness/useExhaustiveDependencies: resetKey is the trigger itself
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setScrollTop(0);
  }, [props.resetKey]);
  const { first, last } = visibleRange(scrollTop, viewport, rows.length);
  const sortOf = (c: string) => props.order.find(([col]) => col === c)?.[1];
  const keyLabel = (i: number) => (pk ? `${pk} ${cellText(rows[i][pk])}` : `row ${i + 1}`);

  return (
    <div
      ref={box}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      className="max-h-[70vh] min-h-40 overflow-auto rounded-md border border-line"
      data-testid="grid-scroller"
    >
      <table
        className="w-full border-collapse text-left font-mono text-xs"
        aria-label={`Rows of ${props.table}`}
        aria-rowcount={rows.length + 1}
      >
        <thead className="sticky top-0 z-10 bg-muted">
          <tr aria-rowindex={1}>
            {columns.map((c) => {
              const dir = sortOf(c.name);
              return (
                <th
                  key={c.name}
                  scope="col"
                  aria-sort={dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : 'none'}
                  className="border-b border-line px-2 py-1 font-semibold whitespace-nowrap"
                >
                  <button type="button" onClick={() => props.onSort(c.name)} className="inline-flex items-center gap-1 hover:underline">
                    <span>{c.name}</span> <span className="font-normal text-fg-muted">{c.type}</span>
                    {c.pk && <span className="font-normal text-accent">key</span>}
                    <span aria-hidden>{dir === 'asc' ? '▲' : dir === 'desc' ? '▼' : ''}</span>
                  </button>
                </th>
              );
            })}
            {pk && (
              <th scope="col" className="border-b border-line px-2 py-1">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr aria-hidden style={{ height: first * ROW_HEIGHT }} />}
          {rows.slice(first, last).map((row, k) => {
            const i = first + k;
            return (
              <tr
                key={pk ? cellText(row[pk]) : i}
                aria-rowindex={i + 2}
                style={{ height: ROW_HEIGHT }}
                className="odd:bg-surface even:bg-muted/40"
              >
                {columns.map((c) => (
                  <td key={c.name} className="max-w-[24rem] border-b border-line/60 px-2 py-0 align-middle whitespace-nowrap">
                    {editing && pk && cellText(editing.key) === cellText(row[pk]) && editing.column === c.name && !isJsonType(c.type) ? (
                      <CellEditor {...props} editing={editing} column={c} label={`${c.name} of ${keyLabel(i)}`} />
                    ) : (
                      <Cell value={row[c.name]} json={isJsonType(c.type)}>
                        {pk && !c.pk && (
                          <button
                            type="button"
                            aria-label={`Edit ${c.name} of ${keyLabel(i)}`}
                            className="absolute inset-0 cursor-text rounded-sm hover:bg-accent/10 focus-visible:outline-2 focus-visible:outline-accent"
                            onClick={() => {
                              const e = { key: row[pk], column: c.name, text: editText(row[c.name], c.type) };
                              if (isJsonType(c.type)) props.onOpenJson(e);
                              else props.onEdit(e);
                            }}
                          />
                        )}
                      </Cell>
                    )}
                  </td>
                ))}
                {pk && (
                  <td className="border-b border-line/60 px-1">
                    <Button
                      variant="ghost"
                      className="px-1.5 py-0.5 text-xs"
                      aria-label={`Delete row ${keyLabel(i)}`}
                      onClick={() => props.onDelete(row[pk])}
                    >
                      Delete
                    </Button>
                  </td>
                )}
              </tr>
            );
          })}
          {last < rows.length && <tr aria-hidden style={{ height: (rows.length - last) * ROW_HEIGHT }} />}
        </tbody>
      </table>
    </div>
  );
}

function Cell({ value, json, children }: { value: unknown; json: boolean; children?: ReactNode }) {
  const text = cellText(value);
  return (
    <div className="relative max-w-[24rem] truncate" title={json && value !== null ? JSON.stringify(value, null, 2) : text}>
      {value === null || value === undefined ? (
        <span className="text-fg-muted">NULL</span>
      ) : (
        <span className={json ? 'text-sql-string' : ''}>{text}</span>
      )}
      {children}
    </div>
  );
}

function CellEditor(props: GridProps & { editing: Editing; column: PgColumn; label: string }) {
  const { editing, column } = props;
  const keys = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter') props.onSave(editing);
    if (e.key === 'Escape') props.onEdit(null);
  };
  return (
    <div className="flex items-center gap-1">
      <input
        // biome-ignore lint/a11y/noAutofocus: the editor opens because the user asked to edit this cell
        autoFocus
        aria-label={`New value: ${props.label}`}
        value={editing.text}
        onChange={(e) => props.onEdit({ ...editing, text: e.target.value })}
        onKeyDown={keys}
        className="w-48 rounded border border-accent bg-surface px-1 py-0.5 text-xs text-fg"
      />
      <Button variant="primary" className="px-1.5 py-0.5 text-xs" disabled={props.saving} onClick={() => props.onSave(editing)}>
        Save
      </Button>
      {column.nullable && (
        <Button className="px-1.5 py-0.5 text-xs" disabled={props.saving} onClick={() => props.onSave(editing, true)}>
          NULL
        </Button>
      )}
      <Button variant="ghost" className="px-1.5 py-0.5 text-xs" onClick={() => props.onEdit(null)}>
        Cancel
      </Button>
    </div>
  );
}
