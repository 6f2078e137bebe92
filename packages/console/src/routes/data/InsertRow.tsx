import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Dialog, Notice, TextArea } from '../../components/ui';
import { api, type PgColumn } from '../../lib/api';
import { isOwnerDefault } from '../../lib/ddl';
import { isJsonType, parseEdit } from './values';
import type { Refusal } from './writes';

/** A column the database fills with the signed-in user's id: with the secret key nobody is signed in, so the admin picks the owner. */
export const isOwnerColumn = (c: PgColumn) => c.type === 'uuid' && isOwnerDefault(c.default_expr);

const FIELD =
  'rounded-md border border-line bg-surface px-2.5 py-1.5 font-mono text-sm aria-[invalid=true]:border-2 aria-[invalid=true]:border-danger';

/**
 * The insert dialog: one field per column; an empty field is left out, so the column gets its
 * default (or NULL). A column that defaults to `auth.uid()` gets a user picker (the secret key
 * has no user, so the default would be NULL). The server's refusal (code and message) is shown
 * in the dialog, and the field of the column it names (`details.column`) is marked.
 */
export function InsertRow(props: {
  table: string;
  columns: PgColumn[];
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onInsert: (row: Record<string, unknown>) => Promise<Refusal | null>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [busy, setBusy] = useState(false);
  const owners = props.columns.filter(isOwnerColumn);
  const users = useQuery({ queryKey: ['users', 'picker'], queryFn: () => api.users('', 100, 0), enabled: props.open && owners.length > 0 });

  async function submit(e: FormEvent) {
    e.preventDefault();
    const row: Record<string, unknown> = {};
    for (const c of props.columns) {
      const text = values[c.name] ?? '';
      if (text === '') continue;
      const parsed = parseEdit(text, c.type);
      if ('error' in parsed) return setRefusal({ code: 'invalid_json', message: `${c.name}: ${parsed.error}`, column: c.name });
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

  const set = (name: string, value: string) => {
    setValues({ ...values, [name]: value });
    if (refusal?.column === name) setRefusal(null);
  };
  const invalid = (name: string) => (refusal?.column === name ? true : undefined);
  const problemOf = (name: string) =>
    refusal?.column === name ? (
      <span role="alert" className="text-xs text-danger">
        {refusal.message}
      </span>
    ) : null;

  return (
    <Dialog title={`Insert a row into ${props.table}`} open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={(e) => void submit(e)} className="space-y-3">
        <div className="max-h-[60vh] space-y-3 overflow-auto pr-1">
          {props.columns.map((c) =>
            isOwnerColumn(c) ? (
              <label key={c.name} className="flex flex-col gap-1 text-sm">
                <span className="font-medium">
                  {c.name} <span className="font-mono text-xs font-normal text-fg-muted">owner (uuid)</span>
                  {!c.nullable && <span className="text-xs text-warn"> required</span>}
                </span>
                <select
                  value={values[c.name] ?? ''}
                  onChange={(e) => set(c.name, e.target.value)}
                  aria-invalid={invalid(c.name)}
                  className={FIELD}
                >
                  <option value="">{users.isLoading ? 'Loading users…' : 'Choose the user who owns the row…'}</option>
                  {users.data?.users.map((u) => (
                    <option key={u.id} value={u.id}>
                      {u.email ?? u.phone ?? u.id}
                    </option>
                  ))}
                </select>
                <span className="text-xs text-fg-muted">
                  Its default is <code>auth.uid()</code>, the signed-in user: the table browser writes with the secret key, where nobody is
                  signed in, so choose whose row this is.
                  {users.data && users.data.users.length === 0 && ' No user yet: add one on the Users page.'}
                </span>
                {problemOf(c.name)}
              </label>
            ) : isJsonType(c.type) ? (
              <div key={c.name} className="space-y-1">
                <TextArea
                  label={`${c.name} (${c.type})`}
                  rows={3}
                  value={values[c.name] ?? ''}
                  placeholder={c.has_default ? 'default' : c.nullable ? 'NULL' : 'JSON'}
                  onChange={(e) => set(c.name, e.target.value)}
                  errors={refusal?.column === c.name ? [refusal.message] : []}
                />
              </div>
            ) : (
              <label key={c.name} className="flex flex-col gap-1 text-sm">
                <span className="font-medium">
                  {c.name} <span className="font-mono text-xs font-normal text-fg-muted">{c.type}</span>
                  {!c.nullable && !c.has_default && <span className="text-xs text-warn"> required</span>}
                </span>
                <input
                  value={values[c.name] ?? ''}
                  placeholder={c.has_default ? 'default' : c.nullable ? 'NULL' : ''}
                  onChange={(e) => set(c.name, e.target.value)}
                  aria-invalid={invalid(c.name)}
                  className={FIELD}
                />
                {problemOf(c.name)}
              </label>
            ),
          )}
        </div>
        {refusal && (
          <Notice kind="error" title="The server refused">
            <code data-testid="insert-refusal-code">{refusal.code}</code>: {refusal.message}
            {refusal.column && (
              <>
                {' '}
                (column <code data-testid="insert-refusal-column">{refusal.column}</code>)
              </>
            )}
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
