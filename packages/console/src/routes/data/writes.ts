import type { PlinthClient, RestResult } from '@plinth/sdk';
import { useState } from 'react';
import type { PgColumn } from '../../lib/api';
import type { Editing } from './Grid';
import { cellText, parseEdit } from './values';

type Row = Record<string, unknown>;
/** A write the server refused: its code and message, and the column it names (`details.column`) when it names one. */
export interface Refusal {
  code: string;
  message: string;
  column?: string;
}
export type Outcome = { kind: 'ok'; text: string } | { kind: 'error'; refusal: Refusal } | null;

/** The refusal of a REST answer, with the column the server named in `details.column`. */
export function refusalOf(res: RestResult<unknown>): Refusal | null {
  if (!res.error) return null;
  const details = res.error.details as { column?: unknown } | undefined;
  const column = details && typeof details === 'object' && typeof details.column === 'string' ? details.column : undefined;
  return { code: res.error.code, message: res.error.message, ...(column ? { column } : {}) };
}

/**
 * The table browser's writes through the REST API (as the secret key): a cell saved, a row
 * deleted or inserted; each ends in an outcome the page shows, and the rows are read again.
 *
 * @example
 * const w = useRowWrites({ client, table, pk, columns, refresh });
 * await w.save({ key: 1, column: 'title', text: 'new' });
 */
export function useRowWrites(opts: {
  client: PlinthClient | null;
  table: string | undefined;
  pk: string | null;
  columns: PgColumn[] | undefined;
  refresh: () => Promise<unknown>;
}) {
  const { client, table, pk, columns, refresh } = opts;
  const [editing, setEditing] = useState<Editing | null>(null);
  const [jsonEdit, setJsonEdit] = useState<Editing | null>(null);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);

  async function save(e: Editing, asNull = false) {
    if (!client || !pk || !table) return;
    const col = columns?.find((c) => c.name === e.column);
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

  return { editing, setEditing, jsonEdit, setJsonEdit, jsonError, setJsonError, saving, outcome, setOutcome, save, remove, insert };
}
