import { Button, Dialog, TextArea } from '../../components/ui';
import type { PgColumn } from '../../lib/api';
import type { Editing } from './Grid';
import { cellText } from './values';

/** The dialog that edits one JSON (or array) cell, with "Set NULL" where the column allows it. */
export function JsonEdit(props: {
  edit: Editing | null;
  pk: string | null;
  columns: PgColumn[] | undefined;
  error: string | null;
  saving: boolean;
  onChange: (e: Editing | null) => void;
  onSave: (e: Editing, asNull?: boolean) => void;
}) {
  const { edit, pk, error, saving } = props;
  return (
    <Dialog title={edit ? `Edit ${edit.column}` : 'Edit'} open={edit !== null} onOpenChange={(o) => !o && props.onChange(null)}>
      {edit && (
        <div className="space-y-3">
          <TextArea
            label={`${edit.column} of ${pk} ${cellText(edit.key)} (JSON)`}
            rows={12}
            spellCheck={false}
            value={edit.text}
            onChange={(e) => props.onChange({ ...edit, text: e.target.value })}
            errors={error ? [error] : []}
          />
          <div className="flex justify-end gap-2">
            <Button onClick={() => props.onChange(null)}>Cancel</Button>
            {props.columns?.find((c) => c.name === edit.column)?.nullable && (
              <Button disabled={saving} onClick={() => props.onSave(edit, true)}>
                Set NULL
              </Button>
            )}
            <Button variant="primary" disabled={saving} onClick={() => props.onSave(edit)}>
              Save
            </Button>
          </div>
        </div>
      )}
    </Dialog>
  );
}
