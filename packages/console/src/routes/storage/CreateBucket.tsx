import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Dialog, ErrorNotice, Field, TextArea, Toggle } from '../../components/ui';
import { ApiFailure } from '../../lib/api';
import { type Bucket, storage } from '../../lib/storage';

const UNITS = [
  ['KiB', 1024],
  ['MiB', 1024 ** 2],
  ['GiB', 1024 ** 3],
] as const;

export const SELECT = 'rounded-md border border-line bg-surface px-2 py-1.5 text-sm text-fg';

type FieldErrors = { name?: string; limit?: string; types: string[] };

/** The server's refusal, at the fields it names (`details[].field`), or at the name for name codes. */
function fieldErrors(err: unknown): FieldErrors | null {
  if (!(err instanceof ApiFailure)) return null;
  if (err.code === 'invalid_bucket_name' || err.code === 'bucket_exists') return { name: err.message, types: [] };
  if (!Array.isArray(err.details)) return null;
  const out: FieldErrors = { types: [] };
  for (const d of err.details as Array<{ field?: string; message?: string }>) {
    if (d.field === 'file_size_limit') out.limit = d.message;
    else if (d.field?.startsWith('allowed_mime_types')) out.types.push(`${d.field.replace('allowed_mime_types', 'type ')}: ${d.message}`);
    else if (d.field === 'name') out.name = d.message;
    else return null;
  }
  return out;
}

/** The limit's number in the largest unit that divides it (a limit of 1.5 MiB shows as 1536 KiB). */
function limitFields(limit: number | null | undefined): { limit: string; unit: number } {
  if (!limit) return { limit: '', unit: 1024 ** 2 };
  const fit = [...UNITS].reverse().find(([, bytes]) => limit % bytes === 0) ?? UNITS[0];
  return { limit: String(limit / fit[1]), unit: fit[1] };
}

/**
 * A new bucket (name, public or not, a file size limit, the MIME types it accepts), or, given
 * `editing`, the settings of an existing one (its name cannot change: it is in every file's URL).
 */
export function CreateBucket(props: {
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onCreated: (b: Bucket) => void;
  editing?: Bucket;
}) {
  const queryClient = useQueryClient();
  const editing = props.editing;
  const [name, setName] = useState(editing?.name ?? '');
  const [isPublic, setPublic] = useState(editing?.public ?? false);
  const [limit, setLimit] = useState(() => limitFields(editing?.file_size_limit).limit);
  const [unit, setUnit] = useState<number>(() => limitFields(editing?.file_size_limit).unit);
  const [types, setTypes] = useState((editing?.allowed_mime_types ?? []).join('\n'));
  const [limitError, setLimitError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: (fields: { limit: number | null; types: string[] | null }) => {
      const body = { public: isPublic, file_size_limit: fields.limit, allowed_mime_types: fields.types };
      if (!editing) return storage.createBucket(name.trim(), body);
      // Only what changed: a field plinth.json manages is refused by the server (409
      // managed_by_config) even unchanged, so the others stay editable.
      const changed = Object.fromEntries(
        Object.entries(body).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(editing[k as keyof typeof body] ?? null)),
      );
      return storage.updateBucket(editing.name, changed);
    },
    onSuccess: async (b) => {
      await queryClient.invalidateQueries({ queryKey: ['storage', 'buckets'] });
      if (!editing) {
        setName('');
        setPublic(false);
        setLimit('');
        setTypes('');
      }
      props.onOpenChange(false);
      props.onCreated(b);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const n = limit.trim() === '' ? null : Number(limit);
    if (n !== null && !(Number.isFinite(n) && n > 0)) {
      setLimitError('Give a positive number, or leave it empty for the server limit.');
      return;
    }
    setLimitError(null);
    const list = types
      .split(/[\s,]+/)
      .map((t) => t.trim())
      .filter(Boolean);
    create.mutate({ limit: n === null ? null : Math.max(1, Math.round(n * unit)), types: list.length ? list : null });
  };
  const errors = fieldErrors(create.error);
  const limitProblem = limitError ?? errors?.limit;
  return (
    <Dialog title={editing ? `Settings of “${editing.name}”` : 'New bucket'} open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={submit} className="space-y-3">
        <Field
          label="Bucket name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoComplete="off"
          required
          disabled={Boolean(editing)}
          hint={
            editing
              ? 'A bucket keeps its name: it is part of every file’s URL.'
              : "1–63 characters: lowercase letters, digits, _ . - (it is part of every file's URL)."
          }
          error={errors?.name}
        />
        <Toggle
          label="Public bucket"
          checked={isPublic}
          onChange={setPublic}
          reason="Anyone with a file's public URL can read it, without a key. Listing and writing stay under the policies."
        />
        <div className="flex flex-col gap-1">
          <label htmlFor="bucket-limit" className="text-sm font-medium">
            File size limit
          </label>
          <div className="flex gap-2">
            <input
              id="bucket-limit"
              type="number"
              min="0"
              step="any"
              inputMode="decimal"
              value={limit}
              onChange={(e) => setLimit(e.target.value)}
              aria-invalid={limitProblem ? true : undefined}
              aria-describedby="bucket-limit-hint"
              className={`${SELECT} w-full aria-[invalid=true]:border-danger`}
            />
            <select aria-label="File size limit unit" value={unit} onChange={(e) => setUnit(Number(e.target.value))} className={SELECT}>
              {UNITS.map(([label, bytes]) => (
                <option key={label} value={bytes}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <p id="bucket-limit-hint" className="text-xs text-fg-muted">
            Empty: the server's STORAGE_MAX_FILE_SIZE.
          </p>
          {limitProblem && (
            <p role="alert" className="text-xs text-danger">
              {limitProblem}
            </p>
          )}
        </div>
        <TextArea
          label="Allowed MIME types"
          value={types}
          onChange={(e) => setTypes(e.target.value)}
          placeholder={'image/*\napplication/pdf'}
          hint="One per line (or comma separated); type/* allows a family. Empty: any type."
          errors={errors?.types}
        />
        {create.error && !errors && <ErrorNotice error={create.error} />}
        <div className="flex justify-end gap-2">
          <Button onClick={() => props.onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={create.isPending || !name.trim()}>
            {editing ? 'Save settings' : 'Create bucket'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
