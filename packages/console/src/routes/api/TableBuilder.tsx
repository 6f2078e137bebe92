import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { CONTROL, FilterEditor, OrderEditor } from '../../components/QueryControls';
import { Button, Notice, TextArea } from '../../components/ui';
import type { PgColumn } from '../../lib/api';
import type { RelationDoc, TableDoc, TableOp } from '../../lib/openapi';
import { type FilterRow, type OrderRow, renderChain } from '../../lib/rest';
import type { ApiSearch } from '../../lib/search';
import { ResponseView, SnippetsView } from './Exchange';
import { WriteNote } from './CallerPanel';
import { embedded, toggleEmbed } from './embed';
import { bodyTemplate, planTable } from './plan';
import { usePreview } from './preview';
import { type CallSetup, type Job, type Sent, snippetsOf, tryIt } from './tryit';

const OPS: Record<TableOp, [string, 'GET' | 'POST' | 'PATCH' | 'DELETE']> = {
  list: ['List rows', 'GET'],
  get: ['Read one', 'GET'],
  create: ['Create', 'POST'],
  update: ['Update', 'PATCH'],
  delete: ['Delete', 'DELETE'],
};

/** The builder's fields; numbers stay text while typed. */
interface Draft {
  op: TableOp;
  byKey: boolean;
  pk: string;
  filters: FilterRow[];
  order: OrderRow[];
  select: string;
  limit: string;
  offset: string;
  count: boolean;
  minimal: boolean;
  body: string;
}

function draftOf(s: ApiSearch, table: TableDoc): Draft {
  return {
    op: s.op && table.ops.includes(s.op) ? s.op : (table.ops[0] ?? 'list'),
    byKey: s.by === 'pk',
    pk: s.pk ?? '',
    filters: s.f ?? [],
    order: s.order ?? [],
    select: s.select ?? '',
    limit: s.limit === undefined ? '' : String(s.limit),
    offset: s.offset === undefined ? '' : String(s.offset),
    count: s.count === true,
    minimal: s.minimal === true,
    body: s.body ?? '',
  };
}

const whole = (s: string) => (/^\d+$/.test(s) ? Number(s) : undefined);

function searchOf(d: Draft): ApiSearch {
  return {
    op: d.op,
    by: d.byKey ? 'pk' : undefined,
    pk: d.pk || undefined,
    f: d.filters.length ? d.filters : undefined,
    order: d.order.length ? d.order : undefined,
    select: d.select || undefined,
    limit: whole(d.limit),
    offset: whole(d.offset),
    count: d.count || undefined,
    minimal: d.minimal || undefined,
    body: d.body || undefined,
  };
}

/**
 * The request builder of one table: operation, filters, order, select, limit, offset,
 * `Prefer`, body; every field is mirrored into the URL (replace, no history entry per key).
 */
export function TableBuilder(props: {
  table: TableDoc;
  pgColumns: PgColumn[] | undefined;
  search: ApiSearch;
  setup: CallSetup | null;
  inlineKeys: boolean;
}) {
  const { table, pgColumns, setup } = props;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [d, setD] = useState(() => draftOf(props.search, table));
  const [sent, setSent] = useState<(Sent & { key: string }) | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  const set = (patch: Partial<Draft>) => setD((prev) => ({ ...prev, ...patch }));

  // An operation chosen outside the builder (the endpoint list's links) is taken in.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a change of the URL's op counts, not of the draft
  useEffect(() => {
    const op = props.search.op;
    if (op && op !== d.op && table.ops.includes(op)) setD((prev) => ({ ...prev, op }));
  }, [props.search.op]);

  useEffect(() => {
    const next = searchOf(d);
    void navigate({ to: '.', search: (prev: ApiSearch) => ({ ...next, as: prev.as }), replace: true } as never);
  }, [d, navigate]);

  const pk = pgColumns?.filter((c) => c.pk).length === 1 ? (pgColumns.find((c) => c.pk)?.name ?? null) : table.pk;
  const columnNames = table.columns.map((c) => c.name);
  const pgType = (name: string) => pgColumns?.find((c) => c.name === name)?.type;
  const targetByKey = d.op === 'get' || ((d.op === 'update' || d.op === 'delete') && d.byKey);
  const base = `/api/v1/db/${encodeURIComponent(table.name)}`;

  /** The request the fields make, or why they make none yet (checked again at Send). */
  function jobOf(): Job | { error: string } {
    const limit = d.limit === '' ? undefined : whole(d.limit);
    const offset = d.offset === '' ? undefined : whole(d.offset);
    if (d.limit !== '' && limit === undefined) return { error: 'Limit must be a whole number (0 or more).' };
    if (d.offset !== '' && offset === undefined) return { error: 'Offset must be a whole number (0 or more).' };
    const planned = planTable(table, pk, { ...d, limit, offset });
    if ('error' in planned) return { error: planned.error };
    const { plan } = planned;
    return plan.kind === 'sdk'
      ? { kind: 'chain', table: table.name, steps: plan.steps, counted: plan.counted }
      : {
          kind: 'raw',
          req: {
            method: plan.method,
            path: plan.path,
            query: plan.query,
            body: plan.body,
            headers: plan.prefer ? { prefer: plan.prefer } : undefined,
          },
          sdkCode: renderChain(table.name, plan.equivalent),
          sdkNote: `The SDK has no call for ${plan.method} ${base}/{pk}: this chain reaches the same row through a filter (another URL, same rows${plan.method === 'GET' ? '; .single() answers not_found when there is none' : ''}).`,
        };
  }
  const job = jobOf();
  const jobKey = `${JSON.stringify(job)}|${setup?.caller}|${setup?.user?.id}|${setup?.revealed}`;
  const preview = usePreview(setup, job, jobKey);

  async function run() {
    setProblem(null);
    if (!setup) return;
    if ('error' in job) return setProblem(job.error);
    const id = ++latest.current;
    const sentKey = jobKey;
    setBusy(true);
    try {
      const result = await tryIt(setup, job);
      if (id !== latest.current) return;
      if ('error' in result) setProblem(result.error);
      else {
        setSent({ ...result, key: sentKey });
        // A write the table browser may have cached: it reads the rows again.
        if (result.exchange.request.method !== 'GET') void queryClient.invalidateQueries({ queryKey: ['rows', table.name] });
      }
    } finally {
      if (id === latest.current) setBusy(false);
    }
  }

  // After a send, the snippets of the request sent, until an edit makes another request.
  const shown =
    sent && sent.key === jobKey
      ? { sent, title: 'Snippets of the request sent' }
      : preview.sent
        ? { sent: preview.sent, title: 'Snippets of the request as built (not sent yet)' }
        : null;
  const snippets = shown && setup ? snippetsOf(shown.sent, setup, props.inlineKeys) : null;
  return (
    <div className="space-y-4">
      <section aria-label={`Request to ${table.name}`} className="space-y-4 rounded-lg border border-line bg-surface p-4">
        <div role="radiogroup" aria-label="Operation" className="flex flex-wrap gap-1">
          {table.ops.map((op) => (
            <label
              key={op}
              className={`cursor-pointer rounded-md border px-2.5 py-1 text-sm ${d.op === op ? 'border-accent bg-accent/10 font-medium' : 'border-line'}`}
            >
              <input type="radio" className="sr-only" name="operation" value={op} checked={d.op === op} onChange={() => set({ op })} />
              {OPS[op][0]} <span className="font-mono text-xs text-fg-muted">{OPS[op][1]}</span>
            </label>
          ))}
        </div>
        <p className="font-mono text-sm" data-testid="endpoint-line">
          <strong>{OPS[d.op][1]}</strong> {base}
          {targetByKey ? '/{pk}' : ''}
        </p>
        {(d.op === 'update' || d.op === 'delete') && table.byKey && (
          <div role="radiogroup" aria-label="Rows to change" className="flex gap-4 text-sm">
            <label className="inline-flex items-center gap-1.5">
              <input type="radio" name="target" checked={!d.byKey} onChange={() => set({ byKey: false })} /> Rows matching the filters
            </label>
            <label className="inline-flex items-center gap-1.5">
              <input type="radio" name="target" checked={d.byKey} onChange={() => set({ byKey: true })} /> One row by primary key
            </label>
          </div>
        )}
        {targetByKey && (
          <label className="flex flex-col gap-1 text-sm">
            <span className="font-medium">Primary key{pk ? ` (${pk})` : ''}</span>
            <input value={d.pk} onChange={(e) => set({ pk: e.target.value })} className={`${CONTROL} w-72 font-mono`} />
          </label>
        )}
        {!targetByKey && d.op !== 'create' && (
          <FilterEditor rows={d.filters} columns={columnNames} onChange={(filters) => set({ filters })} />
        )}
        {d.op === 'list' && <OrderEditor rows={d.order} columns={columnNames} onChange={(order) => set({ order })} />}
        {(d.op === 'list' || d.op === 'get') && (
          <div className="flex flex-wrap items-end gap-3">
            <label className="flex flex-col gap-1 text-sm">
              <span className="font-medium">Select (columns)</span>
              <input
                value={d.select}
                placeholder="* (all)"
                onChange={(e) => set({ select: e.target.value })}
                className={`${CONTROL} w-72 font-mono`}
              />
            </label>
            {table.relations.length > 0 && (
              <RelationPicker relations={table.relations} select={d.select} onChange={(select) => set({ select })} />
            )}
            {d.op === 'list' && (
              <>
                <label className="flex flex-col gap-1 text-sm">
                  <span className="font-medium">Limit</span>
                  <input
                    inputMode="numeric"
                    value={d.limit}
                    placeholder="100"
                    onChange={(e) => set({ limit: e.target.value })}
                    className={`${CONTROL} w-24`}
                  />
                </label>
                <label className="flex flex-col gap-1 text-sm">
                  <span className="font-medium">Offset</span>
                  <input
                    inputMode="numeric"
                    value={d.offset}
                    placeholder="0"
                    onChange={(e) => set({ offset: e.target.value })}
                    className={`${CONTROL} w-24`}
                  />
                </label>
                <label className="inline-flex items-center gap-1.5 pb-1 text-sm">
                  <input type="checkbox" checked={d.count} onChange={(e) => set({ count: e.target.checked })} />
                  Count (<code>Prefer: count=exact</code>)
                </label>
              </>
            )}
          </div>
        )}
        {(d.op === 'create' || d.op === 'update') && (
          <div className="grid grid-cols-1 gap-3 lg:grid-cols-[minmax(0,1fr)_16rem]">
            <TextArea
              label="JSON body"
              rows={8}
              value={d.body}
              spellCheck={false}
              onChange={(e) => set({ body: e.target.value })}
              hint={
                d.op === 'create'
                  ? 'An object, or an array of objects (at most 1000) for several rows.'
                  : 'The columns to change and their new values.'
              }
            />
            <div className="space-y-2 text-xs">
              <Button onClick={() => set({ body: bodyTemplate(table, d.op === 'create' ? 'create' : 'update') })}>
                Fill with the table’s columns
              </Button>
              <ul aria-label={`Columns of ${table.name}`} className="space-y-0.5 font-mono">
                {table.columns.map((c) => (
                  <li key={c.name}>
                    {c.name} <span className="text-fg-muted">{pgType(c.name) ?? c.type}</span>
                    {c.required ? <span className="text-warn"> required</span> : ''}
                    {c.readOnly ? <span className="text-fg-muted"> read-only</span> : ''}
                  </li>
                ))}
              </ul>
            </div>
          </div>
        )}
        {d.op !== 'list' && d.op !== 'get' && (
          <label className="inline-flex items-center gap-1.5 text-sm">
            <input type="checkbox" checked={d.minimal} onChange={(e) => set({ minimal: e.target.checked })} />
            No body in the answer (<code>Prefer: return=minimal</code>)
          </label>
        )}
        <div className="flex items-center gap-3">
          <Button variant="primary" className="shrink-0" onClick={() => void run()} disabled={busy || !setup}>
            {busy ? 'Sending…' : 'Send request'}
          </Button>
          <WriteNote method={OPS[d.op][1]} />
        </div>
        {problem && <Notice kind="error">{problem}</Notice>}
      </section>
      {sent && <ResponseView exchange={sent.exchange} />}
      {snippets && shown ? (
        <SnippetsView title={shown.title} curl={snippets.curl} sdk={snippets.sdk} sdkNote={shown.sent.sdkNote} />
      ) : (
        <p className="text-sm text-fg-muted" data-testid="snippets-missing">
          {preview.error ? `No snippets yet: ${preview.error}` : 'Building the request…'}
        </p>
      )}
    </div>
  );
}

/**
 * The relations the table's rows can embed (the OpenAPI document's `x-plinth-relationships`):
 * ticking one writes `name(*)` into the select, which can then be edited by hand
 * (`authors(name)`, an alias `writer:authors(*)`).
 */
function RelationPicker(props: { relations: RelationDoc[]; select: string; onChange: (select: string) => void }) {
  const on = embedded(
    props.select,
    props.relations.map((r) => r.name),
  );
  return (
    <fieldset className="flex min-w-0 flex-col gap-1 text-sm">
      <legend className="mb-1 font-medium">Embed related rows</legend>
      <div className="flex flex-wrap gap-x-4 gap-y-1">
        {props.relations.map((r) => (
          <label key={r.name} className="inline-flex items-center gap-1.5" title={`foreign key ${r.constraint}`}>
            <input
              type="checkbox"
              checked={on.has(r.name)}
              onChange={(e) => props.onChange(toggleEmbed(props.select, r.name, e.target.checked))}
            />
            <code>{r.name}</code>
            <span className="text-xs text-fg-muted">
              {r.cardinality === 'many' ? 'many' : 'one'}
              {r.via ? `, via ${r.via}` : ''}
            </span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
