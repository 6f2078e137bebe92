import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Dialog, ErrorNotice, Field, Toggle } from '../../components/ui';
import { ApiFailure, api, MASK, type Webhook, type WebhookCreated, type WebhookEvent } from '../../lib/api';

const EVENTS: WebhookEvent[] = ['insert', 'update', 'delete'];
const INPUT = 'rounded-md border border-line bg-surface px-2.5 py-1.5 text-sm text-fg';
const SELECT = `w-full ${INPUT}`;

interface HeaderRow {
  key: number;
  name: string;
  value: string;
}

/** The server's `invalid_webhook` / `webhook_url_refused` details, by field (`headers.X-Token` → `headers`). */
function fieldErrors(err: unknown): Record<string, string> | null {
  if (!(err instanceof ApiFailure)) return null;
  if (err.code === 'webhook_url_refused') return { url: err.message };
  if (err.code !== 'invalid_webhook' || !Array.isArray(err.details)) return null;
  const out: Record<string, string> = {};
  for (const d of err.details as Array<{ field: string; message: string }>) {
    const field = d.field.startsWith('headers') ? 'headers' : d.field;
    const text = d.field.startsWith('headers.') ? `${d.field.slice(8)}: ${d.message}` : d.message;
    out[field] = out[field] ? `${out[field]}; ${text}` : text;
  }
  return out;
}

/**
 * Creates a webhook, or (with `editing`) changes one: name, table, events, URL, filter, extra
 * headers (stored values come back as ******** and are kept unless replaced), on or off. The
 * server checks everything and names each wrong field; they show under their inputs.
 */
export function WebhookForm(props: {
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onCreated?: (w: WebhookCreated) => void;
  editing?: Webhook;
}) {
  const { editing } = props;
  const queryClient = useQueryClient();
  const tables = useQuery({ queryKey: ['plain-tables'], queryFn: api.tables });
  const [name, setName] = useState(editing?.name ?? '');
  const [table, setTable] = useState(editing?.table ?? '');
  const [events, setEvents] = useState<WebhookEvent[]>(editing?.events ?? [...EVENTS]);
  const [url, setUrl] = useState(editing?.url ?? 'https://');
  const [filter, setFilter] = useState(editing?.filter ?? '');
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const [headers, setHeaders] = useState<HeaderRow[]>(() =>
    Object.entries(editing?.headers ?? {}).map(([n, v], i) => ({ key: i, name: n, value: v })),
  );
  const [nextKey, setNextKey] = useState(headers.length);

  const save = useMutation({
    mutationFn: async () => {
      const body = {
        name: name.trim(),
        table,
        events,
        url: url.trim(),
        filter: filter.trim() || null,
        headers: Object.fromEntries(headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value])),
        enabled,
      };
      return editing ? api.updateWebhook(editing.id, body) : api.createWebhook(body);
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['webhooks'] });
      if (editing) props.onOpenChange(false);
      else props.onCreated?.(saved as WebhookCreated);
    },
  });
  const errors = fieldErrors(save.error) ?? {};
  const tableNames = tables.data?.map((t) => t.table) ?? [];
  if (editing && !tableNames.includes(editing.table)) tableNames.unshift(editing.table);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };

  return (
    <Dialog title={editing ? `Edit ${editing.name}` : 'Create webhook'} open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={submit} className="max-h-[75vh] space-y-3 overflow-y-auto pr-1" aria-label={editing ? 'Edit webhook' : 'New webhook'}>
        <Field
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={errors.name}
          placeholder="Welcome mail on sign-up"
        />
        <div className="flex flex-col gap-1">
          <label htmlFor="webhook-table" className="text-sm font-medium">
            Table
          </label>
          <select
            id="webhook-table"
            className={SELECT}
            value={table}
            onChange={(e) => setTable(e.target.value)}
            aria-invalid={errors.table ? true : undefined}
            aria-describedby={errors.table ? 'webhook-table-error' : undefined}
          >
            <option value="">{tables.isLoading ? 'Loading tables…' : 'Choose a table'}</option>
            {tableNames.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          {errors.table && (
            <p id="webhook-table-error" role="alert" className="text-xs text-danger">
              {errors.table}
            </p>
          )}
        </div>
        <fieldset className="space-y-1">
          <legend className="text-sm font-medium">Events</legend>
          <div className="flex flex-wrap gap-4">
            {EVENTS.map((ev) => (
              <label key={ev} className="inline-flex items-center gap-1.5 text-sm">
                <input
                  type="checkbox"
                  checked={events.includes(ev)}
                  onChange={(e) =>
                    setEvents(e.target.checked ? EVENTS.filter((x) => x === ev || events.includes(x)) : events.filter((x) => x !== ev))
                  }
                />
                {ev}
              </label>
            ))}
          </div>
          {errors.events && (
            <p role="alert" className="text-xs text-danger">
              {errors.events}
            </p>
          )}
        </fieldset>
        <Field
          label="URL"
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={errors.url}
          placeholder="https://example.com/hooks/plinth"
        />
        <Field
          label="Filter (optional)"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          error={errors.filter}
          placeholder="eq.status=paid&gte.total=100"
          hint="The REST API's filters, joined with &: tested on the row as written (the old row for a delete)."
        />
        <fieldset className="space-y-2">
          <legend className="text-sm font-medium">Extra headers</legend>
          <p className="text-xs text-fg-muted">
            Sent with every request (an Authorization for your endpoint, say). Saved values show as {MASK}.
          </p>
          {headers.map((h, i) => (
            <div key={h.key} className="flex gap-2">
              <input
                aria-label={`Header ${i + 1} name`}
                value={h.name}
                placeholder="Authorization"
                onChange={(e) => setHeaders(headers.map((x) => (x.key === h.key ? { ...x, name: e.target.value } : x)))}
                className={`${INPUT} w-2/5 min-w-0`}
              />
              <input
                aria-label={`Header ${i + 1} value`}
                type={h.value === MASK ? 'text' : 'password'}
                autoComplete="off"
                value={h.value}
                placeholder="value"
                onFocus={() => h.value === MASK && setHeaders(headers.map((x) => (x.key === h.key ? { ...x, value: '' } : x)))}
                onBlur={() =>
                  h.value === '' &&
                  editing?.headers[h.name] !== undefined &&
                  setHeaders(headers.map((x) => (x.key === h.key ? { ...x, value: MASK } : x)))
                }
                onChange={(e) => setHeaders(headers.map((x) => (x.key === h.key ? { ...x, value: e.target.value } : x)))}
                className={`${INPUT} min-w-0 flex-1 font-mono`}
              />
              <Button
                variant="ghost"
                aria-label={`Remove header ${i + 1}`}
                onClick={() => setHeaders(headers.filter((x) => x.key !== h.key))}
              >
                ✕
              </Button>
            </div>
          ))}
          <Button
            onClick={() => {
              setHeaders([...headers, { key: nextKey, name: '', value: '' }]);
              setNextKey(nextKey + 1);
            }}
          >
            Add header
          </Button>
          {errors.headers && (
            <p role="alert" className="text-xs text-danger">
              {errors.headers}
            </p>
          )}
        </fieldset>
        <Toggle label="Enabled" checked={enabled} onChange={setEnabled} />
        {save.error && !fieldErrors(save.error) && <ErrorNotice error={save.error} />}
        {save.error && fieldErrors(save.error) && (
          <p role="alert" className="text-sm text-danger">
            Not saved: the server refused the fields marked above.
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => props.onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : editing ? 'Save' : 'Create webhook'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
