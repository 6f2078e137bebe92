import type { TableDoc, TableOp } from '../../lib/openapi';
import { type FilterRow, filterSteps, type OrderRow, orderSteps, type Step } from '../../lib/rest';

/**
 * The API explorer's request for a table, from the builder's fields: either a chain of SDK
 * query-builder calls (what runs is what the SDK snippet shows), or, for the by-key endpoints
 * the query builder has no call for (`/{pk}`), a plain request through the SDK's `send` plus
 * the closest SDK chain. No DOM: unit-tested in Node.
 */

export interface TableRequest {
  op: TableOp;
  /** Update or delete by primary key instead of by filters. */
  byKey: boolean;
  pk: string;
  filters: FilterRow[];
  order: OrderRow[];
  select: string;
  limit: number | undefined;
  offset: number | undefined;
  count: boolean;
  minimal: boolean;
  body: string;
}

export type Plan =
  | { kind: 'sdk'; steps: Step[]; counted: boolean }
  | {
      kind: 'raw';
      method: 'GET' | 'PATCH' | 'DELETE';
      path: string;
      query: string;
      body: unknown;
      prefer: string | null;
      /** The SDK chain that reads or changes the same row (a different request: a filter, not `/{pk}`). */
      equivalent: Step[];
    };

/** The body text as JSON, or the reason it is not. */
export function parseBody(text: string, op: TableOp): { value: unknown } | { error: string } {
  if (!text.trim())
    return {
      error:
        op === 'create'
          ? 'Write the row to create as a JSON object (or an array of objects).'
          : 'Write the columns to change as a JSON object.',
    };
  try {
    const value = JSON.parse(text) as unknown;
    const object = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (op === 'update' && !object) return { error: 'The body of an update is one JSON object of columns to new values.' };
    if (op === 'create' && !object && !Array.isArray(value))
      return { error: 'The body of a create is a JSON object, or an array of objects.' };
    return { value };
  } catch (err) {
    return { error: `The body is not valid JSON: ${(err as Error).message}` };
  }
}

/**
 * The plan of a table request, or the first reason it cannot be sent.
 * @example planTable(todos, 'id', { ...defaults, op: 'list', filters: [['eq', 'done', 'false']] })
 *   // { kind: 'sdk', steps: [{ method: 'select', args: [] }, { method: 'eq', args: ['done', false] }], counted: false }
 */
export function planTable(table: TableDoc, pk: string | null, r: TableRequest): { plan: Plan } | { error: string } {
  const select = r.select.replace(/\s+/g, '');
  const filters = filterSteps(r.filters, table.columns);
  const options = (extra: Record<string, string> = {}) => {
    const o: Record<string, string> = { ...extra };
    if (r.minimal) o.returning = 'minimal';
    return Object.keys(o).length ? [o] : [];
  };
  const byKey = r.op === 'get' || ((r.op === 'update' || r.op === 'delete') && r.byKey);
  if (byKey) {
    if (!pk) return { error: `"${table.name}" has no single-column primary key: use filters.` };
    if (r.pk === '') return { error: `Give the ${pk} of the row.` };
    const path = `/api/v1/db/${encodeURIComponent(table.name)}/${encodeURIComponent(r.pk)}`;
    const key = filterSteps([['eq', pk, r.pk]], table.columns);
    const eq = 'steps' in key ? key.steps : [];
    if (r.op === 'get') {
      const query = select && select !== '*' ? `select=${encodeURIComponent(select).replace(/%2C/gi, ',')}` : '';
      const equivalent = [
        { method: 'select', args: select && select !== '*' ? [select] : [] },
        ...eq,
        { method: 'single', args: [] },
      ] as Step[];
      return { plan: { kind: 'raw', method: 'GET', path, query, body: undefined, prefer: null, equivalent } };
    }
    const prefer = r.minimal ? 'return=minimal' : null;
    if (r.op === 'delete') {
      return {
        plan: {
          kind: 'raw',
          method: 'DELETE',
          path,
          query: '',
          body: undefined,
          prefer,
          equivalent: [{ method: 'delete', args: options() }, ...eq],
        },
      };
    }
    const body = parseBody(r.body, 'update');
    if ('error' in body) return body;
    const equivalent: Step[] = [{ method: 'update', args: [body.value, ...options()] }, ...eq];
    return { plan: { kind: 'raw', method: 'PATCH', path, query: '', body: body.value, prefer, equivalent } };
  }
  if ('error' in filters) return filters;
  if (r.op === 'list') {
    const head: Step = {
      method: 'select',
      args: r.count ? [select || '*', { count: 'exact' }] : select && select !== '*' ? [select] : [],
    };
    const steps: Step[] = [head, ...filters.steps, ...orderSteps(r.order)];
    if (r.limit !== undefined) steps.push({ method: 'limit', args: [r.limit] });
    if (r.offset !== undefined) steps.push({ method: 'offset', args: [r.offset] });
    return { plan: { kind: 'sdk', steps, counted: r.count } };
  }
  if (r.op === 'create') {
    const body = parseBody(r.body, 'create');
    if ('error' in body) return body;
    return { plan: { kind: 'sdk', steps: [{ method: 'insert', args: [body.value, ...options()] }], counted: false } };
  }
  // The server refuses an update or delete without filters (filter_required); let it say so.
  if (r.op === 'update') {
    const body = parseBody(r.body, 'update');
    if ('error' in body) return body;
    return { plan: { kind: 'sdk', steps: [{ method: 'update', args: [body.value, ...options()] }, ...filters.steps], counted: false } };
  }
  return { plan: { kind: 'sdk', steps: [{ method: 'delete', args: options() }, ...filters.steps], counted: false } };
}

/**
 * A starting body for a create or an update: every writable column, required ones first,
 * with a placeholder of its type.
 * @example bodyTemplate(todos, 'create') // '{\n  "title": "",\n  "done": false\n}'
 */
export function bodyTemplate(table: TableDoc, op: 'create' | 'update'): string {
  const cols = table.columns.filter((c) => !c.readOnly);
  // Columns with a default (a serial key, `done default false`) are left to it.
  const chosen = op === 'create' ? cols.filter((c) => c.required) : [];
  const list = chosen.length ? chosen : (cols.find((c) => c.nullable) ?? cols[0]) ? [cols.find((c) => c.nullable) ?? cols[0]] : [];
  const sample = (kind: string): unknown =>
    kind === 'integer' || kind === 'number'
      ? 0
      : kind === 'boolean'
        ? false
        : kind === 'array'
          ? []
          : kind === 'object' || kind === 'json'
            ? {}
            : '';
  return JSON.stringify(Object.fromEntries(list.map((c) => [c.name, sample(c.kind)])), null, 2);
}
