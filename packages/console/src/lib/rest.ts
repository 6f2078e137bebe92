import { FILTER_OPERATORS, type FilterOperator } from '@plinth/shared';
import type { ColumnDoc } from './openapi';

/**
 * Database requests as the console builds them (the API explorer and the table browser):
 * filter and order rows, and the SDK call that sends them as a list of steps, so the call that
 * runs and the SDK snippet shown are one and the same value. No DOM: unit-tested in Node.
 */

/** `[operator, column, value]`: the value is written as in the URL (`in`: `a,"b,c"`; `is`: null|true|false). */
export type FilterRow = [FilterOperator, string, string];
/** `[column, direction, nulls?]`. */
export type OrderRow = [string, 'asc' | 'desc', ('first' | 'last')?];

/** One method call of the SDK's query builder, e.g. `{ method: 'eq', args: ['done', false] }`. */
export interface Step {
  method: (typeof STEP_METHODS)[number];
  args: unknown[];
}
/** The builder methods a step may name (nothing else is ever called on the client). */
export const STEP_METHODS = [
  'select',
  'insert',
  'update',
  'delete',
  ...FILTER_OPERATORS,
  'order',
  'limit',
  'offset',
  'single',
  'maybeSingle',
] as const;

export const IS_VALUES = ['null', 'true', 'false'] as const;

/**
 * Splits an `in` list like the server does (comma-separated; `"…"` may hold commas, `\` escapes
 * inside quotes); an error message when it would refuse it.
 * @example splitList('a,"b,c"') // { items: ['a', 'b,c'] }
 */
export function splitList(s: string): { items: string[] } | { error: string } {
  const items: string[] = [];
  if (s === '') return { items };
  let i = 0;
  for (;;) {
    if (s[i] === '"') {
      let buf = '';
      let j = i + 1;
      while (j < s.length && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        buf += s[j++];
      }
      if (j >= s.length) return { error: 'A quoted item is not closed.' };
      j++;
      if (j < s.length && s[j] !== ',') return { error: 'Text follows a quoted item; separate items with commas.' };
      items.push(buf);
      i = j;
    } else {
      const comma = s.indexOf(',', i);
      const end = comma === -1 ? s.length : comma;
      items.push(s.slice(i, end));
      i = end;
    }
    if (i >= s.length) return { items };
    i++;
    if (i === s.length) {
      items.push('');
      return { items };
    }
  }
}

/**
 * A filter value as the JS literal the SDK call takes: a number or boolean when the column has
 * that type and the text is exactly how the SDK would write it back, else the text itself (the
 * request is the same either way; the snippet reads like code an app would hold).
 * @example typedValue({ kind: 'integer' } as ColumnDoc, '42') // 42
 */
export function typedValue(column: ColumnDoc | undefined, text: string): string | number | boolean {
  if (!column) return text;
  if ((column.kind === 'integer' || column.kind === 'number') && /^-?\d+(\.\d+)?$/.test(text) && String(Number(text)) === text) {
    return Number(text);
  }
  if (column.kind === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * The SDK steps of filter rows; the first refusal (as a sentence) when a row cannot be sent.
 * @example filterSteps([['in', 'tag', 'a,"b,c"']], cols) // { steps: [{ method: 'in', args: ['tag', ['a', 'b,c']] }] }
 */
export function filterSteps(rows: FilterRow[], columns: ColumnDoc[]): { steps: Step[] } | { error: string } {
  const steps: Step[] = [];
  for (const [i, [op, column, value]] of rows.entries()) {
    if (!column) return { error: `Filter ${i + 1} names no column.` };
    const col = columns.find((c) => c.name === column);
    if (op === 'in') {
      const list = splitList(value);
      if ('error' in list) return { error: `Filter ${i + 1} (in): ${list.error}` };
      steps.push({ method: 'in', args: [column, list.items.map((v) => typedValue(col, v))] });
    } else if (op === 'is') {
      if (!(IS_VALUES as readonly string[]).includes(value)) return { error: `Filter ${i + 1} (is) takes null, true or false.` };
      steps.push({ method: 'is', args: [column, value === 'null' ? null : value === 'true'] });
    } else if (op === 'like' || op === 'ilike') {
      steps.push({ method: op, args: [column, value] });
    } else {
      steps.push({ method: op, args: [column, typedValue(col, value)] });
    }
  }
  return { steps };
}

/** The SDK steps of order rows: `.order(col)`, `.order(col, { ascending: false, nullsFirst })`. */
export function orderSteps(rows: OrderRow[]): Step[] {
  return rows
    .filter(([column]) => column !== '')
    .map(([column, dir, nulls]) => {
      const options: Record<string, boolean> = {};
      if (dir === 'desc') options.ascending = false;
      if (nulls) options.nullsFirst = nulls === 'first';
      return { method: 'order', args: Object.keys(options).length ? [column, options] : [column] };
    });
}

/** The wire form of order rows (`a.asc,b.desc.nullslast`), as the SDK writes it. */
export function orderParam(rows: OrderRow[]): string {
  return rows
    .filter(([column]) => column !== '')
    .map(([column, dir, nulls]) => `${column}.${dir}${nulls ? `.nulls${nulls}` : ''}`)
    .join(',');
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

/**
 * A value as JavaScript source: strings single-quoted, objects with bare keys where possible.
 * `indent` > 0 spreads objects and arrays over lines.
 * @example js({ title: "it's", done: false }) // "{ title: 'it\\'s', done: false }"
 */
export function js(value: unknown, indent = 0, depth = 0): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    return `'${value
      .replace(/[\\']/g, '\\$&')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029')}'`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const pad = indent ? `\n${' '.repeat(indent * (depth + 1))}` : ' ';
  const end = indent ? `\n${' '.repeat(indent * depth)}` : ' ';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((v) => js(v, indent, depth + 1));
    return indent ? `[${pad}${items.join(`,${pad}`)}${end}]` : `[${items.join(', ')}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  // `__proto__: x` in a literal sets the prototype instead of a key; a computed key does not.
  const key = (k: string) => (k === '__proto__' ? `[${js(k)}]` : IDENT.test(k) ? k : js(k));
  const items = entries.map(([k, v]) => `${key(k)}: ${js(v, indent, depth + 1)}`);
  return `{${pad}${items.join(`,${pad}`)}${end}}`;
}

/**
 * The chain `client.from('t').a(…).b(…)` as source, one call per line.
 * @example renderChain('todos', [{ method: 'select', args: [] }]) // "client\n  .from('todos')\n  .select()"
 */
export function renderChain(table: string, steps: Step[], client = 'client'): string {
  const lines = [`${client}`, `  .from(${js(table)})`];
  for (const s of steps)
    lines.push(
      `  .${s.method}(${s.args.map((a) => js(a, a !== null && typeof a === 'object' && !Array.isArray(a) && Object.keys(a).length > 2 ? 2 : 0, 1)).join(', ')})`,
    );
  return lines.join('\n');
}

interface Chainable {
  from(table: string): unknown;
}

/**
 * Runs the steps on an SDK client: the same calls `renderChain` shows.
 * @example await runChain(client, 'todos', [{ method: 'select', args: [] }, { method: 'eq', args: ['done', false] }])
 */
export function runChain<T>(client: Chainable, table: string, steps: Step[]): PromiseLike<T> {
  let q = client.from(table) as Record<string, (...args: unknown[]) => unknown>;
  for (const s of steps) {
    if (!(STEP_METHODS as readonly string[]).includes(s.method) || typeof q[s.method] !== 'function') {
      throw new Error(`The SDK's query builder has no ${s.method}() here.`);
    }
    q = q[s.method](...s.args) as typeof q;
  }
  return q as unknown as PromiseLike<T>;
}
