/**
 * `postgres_changes` in Supabase's words, onto realtime's hub (docs/supabase.md, "Realtime
 * channels"): a binding `{event, schema, table, filter}` of a join becomes one subscription of
 * the core (the same change capture, per-event RLS decision and filter evaluator as
 * /api/v1/realtime), its filter translated into REST's grammar (a parser, no evaluator here), and
 * each change written as Supabase Realtime sends it.
 */
import { ApiError } from '../../http/index.js';
import type { ChangeFormat, ChangeParts, Subscription } from '../../realtime/index.js';
import { encodeFrame, type Vsn } from './phoenix.js';

type ChangeEvent = 'insert' | 'update' | 'delete';

export interface Binding {
  event: string;
  schema: string;
  table: string;
  filter?: string;
}

/** What a binding asks of the hub. */
export interface PlannedBinding {
  binding: Binding;
  events: ReadonlySet<ChangeEvent>;
  /** The filter in REST's grammar (`eq.id=7`), or null. */
  filter: string | null;
}

const EVENTS: Record<string, ChangeEvent[]> = {
  '*': ['insert', 'update', 'delete'],
  INSERT: ['insert'],
  UPDATE: ['update'],
  DELETE: ['delete'],
};

/** The operators Supabase Realtime takes in a filter (`column=op.value`). */
const OPERATORS = new Set(['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in']);

const bad = (message: string) => new ApiError('invalid_parameter', message, { field: 'postgres_changes' });

/**
 * realtime-js's filter (`column=eq.value`, `id=in.(1,2,3)`) as REST's (`eq.column=value`,
 * `in.id=1,2,3`), which realtime's own filter compiler checks against the table and the role.
 * @example supabaseFilter('status=in.(open,"on hold")') // 'in.status=open%2C%22on%20hold%22'
 */
export function supabaseFilter(text: string): string {
  const eq = text.indexOf('=');
  const dot = text.indexOf('.', eq + 1);
  if (eq <= 0 || dot < 0) throw bad(`The filter "${text.slice(0, 200)}" is not column=operator.value (e.g. id=eq.7).`);
  const column = text.slice(0, eq);
  const op = text.slice(eq + 1, dot);
  let value = text.slice(dot + 1);
  if (!OPERATORS.has(op)) {
    throw bad(`The filter operator "${op.slice(0, 20)}" is not one Supabase Realtime takes: eq, neq, lt, lte, gt, gte or in.`);
  }
  if (op === 'in') {
    if (!value.startsWith('(') || !value.endsWith(')')) throw bad(`An in filter lists its values in parentheses: ${column}=in.(1,2,3).`);
    value = value.slice(1, -1);
  }
  return `${op}.${encodeURIComponent(column)}=${encodeURIComponent(value)}`;
}

/** A join's `postgres_changes` list, checked; a wrong one is refused whole. */
export function planBindings(list: unknown): PlannedBinding[] {
  if (!Array.isArray(list)) return [];
  return list.map((raw): PlannedBinding => {
    const b = (raw ?? {}) as Record<string, unknown>;
    const event = typeof b.event === 'string' ? b.event.toUpperCase() : '';
    const events = EVENTS[event === '*' ? '*' : event];
    if (!events) throw bad(`A postgres_changes event is INSERT, UPDATE, DELETE or *, not ${JSON.stringify(b.event)?.slice(0, 40)}.`);
    if (b.schema !== 'public') throw bad('postgres_changes are served for the public schema: give schema "public".');
    if (typeof b.table !== 'string' || b.table === '' || b.table === '*') {
      throw bad('Name a table in each postgres_changes binding (Plinth captures per table: select realtime.enable(…)).');
    }
    const filter = typeof b.filter === 'string' && b.filter !== '' ? b.filter : undefined;
    return {
      binding: { event: b.event as string, schema: 'public', table: b.table, ...(filter === undefined ? {} : { filter }) },
      events: new Set(events),
      filter: filter === undefined ? null : supabaseFilter(filter),
    };
  });
}

const TYPES: Record<string, string> = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' };

/**
 * Changes as Supabase Realtime writes them: `{ids, data: {schema, table, commit_timestamp, type,
 * columns, record, old_record, errors}}` on the channel's topic. An update that takes a row out
 * of the subscriber's view (Plinth's `leave`) is not sent, as Supabase sends nothing for it.
 * @example supabaseFormat(2, 'realtime:room', '1', 7)
 */
export function supabaseFormat(vsn: Vsn, topic: string, joinRef: string | null, id: number): ChangeFormat {
  return {
    key: `supabase\u0000${vsn}\u0000${topic}\u0000${joinRef}\u0000${id}`,
    change(sub: Subscription, c: ChangeParts): string | null {
      const type = TYPES[c.op];
      if (type === undefined) return null;
      const columns = JSON.stringify(sub.columns.map((col) => ({ name: col.name, type: col.udt })));
      let data = `{"schema":"public","table":${JSON.stringify(c.table)},"commit_timestamp":${JSON.stringify(c.writtenAt)},"type":"${type}","columns":${columns}`;
      if (c.op !== 'delete') data += `,"record":${c.row ?? '{}'}`;
      if (c.op !== 'insert') data += `,"old_record":${c.old ?? '{}'}`;
      data += ',"errors":null}';
      return encodeFrame(vsn, { join_ref: joinRef, ref: null, topic, event: 'postgres_changes' }, `{"ids":[${id}],"data":${data}}`);
    },
    subscribed: () => null,
  };
}
