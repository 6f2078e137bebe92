/** `select=` against the schema: output keys, aggregates and embedded relations by foreign key. */
import { ApiError } from '../../http/index.js';
import type { EmbeddedParams, SelectItem } from '../request/index.js';
import {
  type ComputedRelation,
  candidates,
  describeRelation,
  type Relation,
  type SchemaSnapshot,
  spelling,
  type TableInfo,
} from '../schema-cache/index.js';
import { fieldKey, planConditions, planOrder, resolveColumn, resolveField } from './fields.js';
import type { EmbedPlan, OutputItem, PlannedCondition } from './types.js';

/** A type a `select` value may be cast to: a type's name, words and an optional `[]`, nothing an expression could hide in. */
const CAST_TYPE = /^[A-Za-z_][A-Za-z0-9_]{0,62}( [A-Za-z_][A-Za-z0-9_]{0,62}){0,2}(\[\])?$/;

export interface SelectContext {
  schema: SchemaSnapshot;
  /** `<relation>.<…>` parameters by path of output keys; each is marked used when its relation is planned. */
  embedded: Map<string, EmbeddedParams>;
  used: Set<string>;
}

/** The relations of a table of the schema (none for a function's own result columns). */
function relationsOf(schema: SchemaSnapshot, table: TableInfo): Relation[] {
  return schema.tables.get(table.name) === table ? (schema.relations.get(table.name) ?? []) : [];
}

/**
 * The keys a level returns, and the `exists` conditions its `!inner` embeddings add to it.
 * `items` null is every column.
 * @example planOutput(ctx, posts, parseSelect('id,author(name)'), [])
 */
export function planOutput(
  ctx: SelectContext,
  table: TableInfo,
  items: SelectItem[] | null,
  path: string[],
): { output: OutputItem[]; inner: PlannedCondition[] } {
  const output: OutputItem[] = [];
  const inner: PlannedCondition[] = [];
  const keys = new Map<string, OutputItem>();
  /** Keys `*` added, which an embedding of the same name replaces. */
  const starKeys = new Set<string>();
  const add = (item: OutputItem) => {
    // Keys are SQL aliases: PostgreSQL would cut a longer one to 63 bytes, silently.
    if (Buffer.byteLength(item.key) > 63) {
      throw new ApiError(
        'invalid_parameter',
        `"select": the key "${item.key.slice(0, 40)}…" is longer than 63 bytes; give it a shorter alias.`,
        {
          parameter: 'select',
        },
      );
    }
    const prev = keys.get(item.key);
    // `*,parent_id(*)`: the embedded row takes the place of the column `*` gave that key (PostgREST's rule).
    if (prev && prev.kind === 'column' && item.kind === 'embed' && starKeys.has(item.key)) {
      starKeys.delete(item.key);
      output[output.indexOf(prev)] = item;
      keys.set(item.key, item);
      return;
    }
    if (prev) {
      // `select=id,id` (or `*,id`) names one column twice: send it once, as before.
      const same =
        prev.kind === 'column' && item.kind === 'column' && prev.column === item.column && !prev.path.length && !item.path.length;
      if (same) return;
      throw new ApiError('invalid_parameter', `"select" sends the key "${item.key}" twice; give one of them an alias (alias:column).`, {
        parameter: 'select',
        key: item.key,
        // Two relations under one key: PostgREST's SQL names both subqueries alike (its 42712).
        ...(prev.kind === 'embed' && item.kind === 'embed' ? { embeddedTwice: `${table.name}_${item.key}_${path.length + 1}` } : {}),
      });
    }
    keys.set(item.key, item);
    output.push(item);
  };
  for (const item of items ?? [{ kind: 'star' as const }]) {
    switch (item.kind) {
      case 'star':
        for (const column of table.columnList) {
          if (!keys.has(column.name)) starKeys.add(column.name);
          add({ kind: 'column', key: column.name, column, path: [] });
        }
        break;
      case 'column': {
        // `messages(count)`: PostgREST reads a bare `count` that is no column as count().
        if (item.column === 'count' && !item.cast && !table.columns.has('count')) {
          add({ kind: 'aggregate', key: item.alias ?? 'count', fn: 'count', column: null });
          break;
        }
        const field = resolveField(table, item.column);
        if (item.cast !== undefined && !CAST_TYPE.test(item.cast)) {
          throw new ApiError('invalid_parameter', `"select": "${item.cast}" is not a type name; write column::text, column::int4…`, {
            parameter: 'select',
          });
        }
        add({ kind: 'column', key: item.alias ?? fieldKey(field), ...field, ...(item.cast ? { cast: item.cast } : {}) });
        break;
      }
      case 'aggregate':
        if (item.cast !== undefined && !CAST_TYPE.test(item.cast)) {
          throw new ApiError('invalid_parameter', `"select": "${item.cast}" is not a type name; write count()::text…`, {
            parameter: 'select',
          });
        }
        add({
          kind: 'aggregate',
          key: item.alias ?? item.fn,
          fn: item.fn,
          column: item.column === null ? null : resolveColumn(table, item.column),
          ...(item.cast ? { cast: item.cast } : {}),
        });
        break;
      case 'embed': {
        const key = item.alias ?? item.relation;
        const embed = planEmbed(ctx, table, item, [...path, key]);
        if (item.spread) {
          // `...author(name)`: the relation's keys join this level's (PostgREST's spread).
          // A to-one spread's aggregates aggregate this level's rows (PostgREST's hoisting: the
          // related row's value is read per row, and this level groups by everything else).
          if (embed.relation.cardinality !== 'one' && embed.output.some((o) => o.kind === 'aggregate')) {
            throw new ApiError(
              'invalid_parameter',
              `"select": "...${key}(…)" spreads aggregates of a to-many relation, which Plinth does not support; aggregate in ${key}(…) without the spread.`,
              { parameter: 'select' },
            );
          }
          for (const o of embed.output) add({ kind: 'spread', key: o.key, embed, item: o });
        } else if (embed.output.length > 0 || item.select === null) add({ kind: 'embed', key, embed });
        if (item.inner) inner.push({ op: 'exists', embed });
        break;
      }
    }
  }
  if (output.some((o) => o.kind === 'aggregate') && output.some((o) => o.kind === 'embed')) {
    throw new ApiError(
      'invalid_parameter',
      '"select" mixes aggregates and embedded relations at one level; aggregate inside the relation instead, e.g. comments(count()).',
      { parameter: 'select' },
    );
  }
  return { output, inner };
}

/** The aggregate keys of a level, which `order` may name. */
export const aggregateKeys = (output: OutputItem[]) => new Set(output.filter((o) => o.kind === 'aggregate').map((o) => o.key));

function planEmbed(ctx: SelectContext, parent: TableInfo, item: Extract<SelectItem, { kind: 'embed' }>, path: string[]): EmbedPlan {
  const relation = resolveRelation(ctx.schema, parent, item.relation, item.hint);
  const table = ctx.schema.tables.get(relation.target);
  if (!table)
    throw new ApiError('table_not_found', `No table or view "${relation.target}" in the ${ctx.schema.schema} schema.`, {
      table: relation.target,
    });
  const key = path.join('.');
  const params = ctx.embedded.get(key);
  ctx.used.add(key);
  try {
    return planEmbedOf(ctx, relation, table, item, path, key, params);
  } catch (err) {
    // A column missing inside a relation: the depth tells /rest/v1 PostgREST's alias (`messages_1`).
    if (
      err instanceof ApiError &&
      err.code === 'column_not_found' &&
      (err.details as { depth?: number } | undefined)?.depth === undefined
    ) {
      throw new ApiError(err.code, err.message, { ...(err.details as object), depth: path.length });
    }
    throw err;
  }
}

function planEmbedOf(
  ctx: SelectContext,
  relation: Relation | ComputedRelation,
  table: TableInfo,
  item: Extract<SelectItem, { kind: 'embed' }>,
  path: string[],
  key: string,
  params: EmbeddedParams | undefined,
): EmbedPlan {
  const { output, inner } = planOutput(ctx, table, item.select, path);
  if (relation.cardinality === 'one' && params && (params.order.length > 0 || params.limit !== null || params.offset !== null)) {
    throw new ApiError(
      'invalid_parameter',
      `"${key}" is one row (${relation.kind}): order, limit and offset apply to relations that embed an array.`,
      { parameter: `${key}.order` },
    );
  }
  return {
    relation,
    table,
    output,
    filters: [...planConditions(table, params?.filters ?? []), ...inner],
    order: planOrder(table, params?.order ?? [], aggregateKeys(output)),
    limit: params?.limit ?? null,
    offset: params?.offset ?? null,
    inner: item.inner,
  };
}

/**
 * The one relation `name` (and `hint`) addresses from `table`: 400 `relation_not_found` when
 * none, 400 `ambiguous_relation` with the candidates and how to write each when several. A name
 * no foreign key gives may be a computed relationship: a function of `table`'s row (no hint).
 * @example resolveRelation(schema, posts, 'author', null) // { kind: 'many-to-one', target: 'authors', … }
 */
export function resolveRelation(schema: SchemaSnapshot, table: TableInfo, name: string, hint: string | null): Relation | ComputedRelation {
  const all = relationsOf(schema, table);
  const found = candidates(all, name, hint);
  const written = hint === null ? name : `${name}!${hint}`;
  if (found.length === 1) return found[0];
  const computed =
    found.length === 0 && hint === null && schema.tables.get(table.name) === table
      ? (schema.computedRelations.get(table.name) ?? []).find((r) => r.function === name)
      : undefined;
  if (computed) return computed;
  if (found.length === 0) {
    const known = [...new Set(all.map((r) => spelling(all, r)))];
    throw new ApiError(
      'relation_not_found',
      `"${table.name}" has no relation "${written}": no foreign key between them either way, nor a join table.` +
        (known.length ? ` Its relations: ${known.join(', ')}.` : ''),
      { table: table.name, relation: written, relations: known },
    );
  }
  throw new ApiError(
    'ambiguous_relation',
    `"${written}" is ambiguous from "${table.name}": ${found.length} foreign keys lead there. Write one of ` +
      `${found.map((r) => spelling(all, r)).join(', ')}.`,
    {
      table: table.name,
      relation: written,
      candidates: found.map((r) => ({
        ...describeRelation(r),
        embed: spelling(all, r),
        // PostgREST's words for it, which its clients show (supabase/rest).
        using:
          r.fk.table === r.source
            ? `${r.fk.name} using ${r.fk.table}(${r.fk.columns.join(', ')}) and ${r.fk.refTable}(${r.fk.refColumns.join(', ')})`
            : `${r.fk.name} using ${r.fk.refTable}(${r.fk.refColumns.join(', ')}) and ${r.fk.table}(${r.fk.columns.join(', ')})`,
      })),
    },
  );
}

/** Refuses `<relation>.…` parameters whose relation `select` does not embed. */
export function checkEmbeddedUsed(ctx: SelectContext): void {
  for (const key of ctx.embedded.keys()) {
    if (!ctx.used.has(key)) {
      throw new ApiError(
        'invalid_parameter',
        `"${key}.…" applies to an embedded relation, but "select" embeds none called "${key}" (use its alias when it has one).`,
        { parameter: key },
      );
    }
  }
}
