import { type FormEvent, useState } from 'react';
import { Button, Dialog, Notice, TextArea } from '../../components/ui';
import type { PgColumn } from '../../lib/api';
import { isJsonType, parseEdit } from './values';

/**
 * The insert dialog: one field per column; an empty field is left out, so the column gets its
 * default (or NULL). The server's refusal (code and message) is shown in the dialog.
 */
export function InsertRow(props: {
  table: string;
  columns: PgColumn[];
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onInsert: (row: Record<string, unknown>) => Promise<{ code: string; message: string } | null>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<{ code: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const row: Record<string, unknown> = {};
    for (const c of props.columns) {
      const text = values[c.name] ?? '';
      if (text === '') continue;
      const parsed = parseEdit(text, c.type);
      if ('error' in parsed) return setRefusal({ code: 'invalid_json', message: `${c.name}: ${parsed.error}` });
      row[c.name] = parsed.value;
    }
    setBusy(true);
    setRefusal(null);
    try {
      const error = await props.onInsert(row);
      if (error) setRefusal(error);
      else {
        setValues({});
        props.onOpenChange(false);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog title={`Insert a row into ${props.table}`} open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={(e) => void submit(e)} className="space-y-3">
        <div className="max-h-[60vh] space-y-3 overflow-auto pr-1">
          {props.columns.map((c) =>
            isJsonType(c.type) ? (
              <TextArea
                key={c.name}
                label={`${c.name} (${c.type})`}
                rows={3}
                value={values[c.name] ?? ''}
                placeholder={c.has_default ? 'default' : c.nullable ? 'NULL' : 'JSON'}
                onChange={(e) => setValues({ ...values, [c.name]: e.target.value })}
              />
            ) : (
              <label key={c.name} className="flex flex-col gap-1 text-sm">
                <span className="font-medium">
                  {c.name} <span className="font-mono text-xs font-normal text-fg-muted">{c.type}</span>
                  {!c.nullable && !c.has_default && <span className="text-xs text-warn"> required</span>}
                </span>
                <input
                  value={values[c.name] ?? ''}
                  placeholder={c.has_default ? 'default' : c.nullable ? 'NULL' : ''}
                  onChange={(e) => setValues({ ...values, [c.name]: e.target.value })}
                  className="rounded-md border border-line bg-surface px-2.5 py-1.5 font-mono text-sm"
                />
              </label>
            ),
          )}
        </div>
        {refusal && (
          <Notice kind="error" title="The server refused">
            <code>{refusal.code}</code>: {refusal.message}
          </Notice>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => props.onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            Insert
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
