/** OpenAPI path items of one table: the collection and, with a single-column key, `/{pk}`. */
import { FILTER_OPERATORS } from '@plinth/shared';
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import type { JsonSchema } from './schema.js';

const OP_TEXT: Record<(typeof FILTER_OPERATORS)[number], string> = {
  eq: 'equals',
  neq: 'differs from',
  gt: 'is greater than',
  lt: 'is less than',
  gte: 'is greater than or equal to',
  lte: 'is less than or equal to',
  like: 'matches the SQL pattern (`%`, `_`; `*` for `%`)',
  ilike: 'matches the SQL pattern, ignoring case',
  in: 'is one of the comma-separated values (double-quote a value that holds a comma)',
  is: 'is null, true, false or unknown',
};

const error = { $ref: '#/components/responses/Error' };
const ERRORS = { '400': error, '401': error, '403': error, '404': error, '5XX': error };
const WRITE_ERRORS = { ...ERRORS, '405': error, '409': error };

const prefer = (values: string) => ({
  name: 'Prefer',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: `Comma-separated preferences: ${values}.`,
});

/** The grammar of `select=` (docs/api.md, "Embedding"), said once for every path that takes it. */
export const SELECT_GRAMMAR =
  'Keys to return, comma-separated (default every column): a column; `alias:column`; a JSON path ' +
  '(`meta->kind` as JSON, `meta->>kind` as text, `tags->0`; the key is the last path element); an aggregate ' +
  '(`count()`, `sum(col)`, `avg(col)`, `min(col)`, `max(col)`, the other columns grouping); or a related table ' +
  'embedded by foreign key, `relation(keys)`: an object (or null) for a many-to-one, an array for a one-to-many or ' +
  'a many-to-many through a join table, nested at will (`comments(body,author(name))`). `alias:relation(…)` renames ' +
  'it, `relation!<foreign key or column>(…)` picks one of several keys (400 `ambiguous_relation` lists them), ' +
  '`relation!inner(…)` keeps only the rows that have a match. Embedded rows take their own `<relation>.<op>.<column>`, ' +
  '`<relation>.or`, `<relation>.order`, `<relation>.limit`, `<relation>.offset`.';

const selectParam = (relations: string[]) => ({
  name: 'select',
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description: relations.length ? `${SELECT_GRAMMAR} Relations here: ${relations.map((r) => `\`${r}\``).join(', ')}.` : SELECT_GRAMMAR,
});

const LOGIC_TEXT =
  'Conditions `(<op>.<column>.<value>,…)` of which %s must hold, nestable with `or(…)` and `and(…)`; `not.<op>` negates one. ' +
  'Double-quote a column or value holding `.`, `,`, `(` or `)`; `in` takes `(a,b)`. Example: `(eq.status.open,and(gt.priority.3,is.owner.null))`.';

/** `or=`, `and=`, and the note that every filter takes `not.`. */
export const logicParams: JsonSchema[] = [
  { name: 'or', in: 'query', required: false, schema: { type: 'string' }, description: LOGIC_TEXT.replace('%s', 'at least one') },
  { name: 'and', in: 'query', required: false, schema: { type: 'string' }, description: LOGIC_TEXT.replace('%s', 'all') },
];

/** Columns a full-text search applies to: text types, json and tsvector. */
const searchable = (col: ColumnInfo) => col.category === 'S' || col.udt === 'tsvector' || col.udt === 'json' || col.udt === 'jsonb';

/** Every filter of every column (`<op>.<col>`, each also as `not.<op>.<col>`), and `fts.<col>` where it applies. */
export function filters(columns: ColumnInfo[]): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const col of columns) {
    for (const op of FILTER_OPERATORS) {
      out.push({
        name: `${op}.${col.name}`,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: `Rows where ${col.name} ${OP_TEXT[op]}. \`not.${op}.${col.name}\` negates it.`,
      });
    }
    if (searchable(col)) {
      out.push({
        name: `fts.${col.name}`,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description:
          `Full-text search of ${col.name}: websearch_to_tsquery syntax (\`"a phrase" or word -excluded\`). ` +
          `\`fts(<configuration>).${col.name}\` picks a configuration (default: the database's).`,
      });
    }
  }
  return [...out, ...logicParams];
}

function json(schema: JsonSchema, description: string, headers?: JsonSchema): JsonSchema {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

/** A `$ref` to a component: a JSON pointer (`~` and `/` escaped) inside a URI fragment. */
export const refTo = (key: string) => ({
  $ref: `#/components/schemas/${encodeURIComponent(key.replaceAll('~', '~0').replaceAll('/', '~1'))}`,
});

/** The components a table's paths refer to, and what the caller may do with it. */
export interface TableDoc {
  table: TableInfo;
  keys: { row: string; insert: string; update: string };
  /** Columns the caller may filter on (those it may read). */
  readable: ColumnInfo[];
  /** How `select=` may name the relations the caller may read (`author`, `authors!posts_editor_id_fkey`). */
  relations: string[];
  can: { read: boolean; insert: boolean; update: boolean; delete: boolean };
}

/**
 * The path items of a table, keyed by path; operations the caller may not use are left out.
 * @example tablePaths(doc) // { '/api/v1/db/todos': { get, post, patch, delete }, '/api/v1/db/todos/{pk}': {...} }
 */
export function tablePaths(doc: TableDoc): Record<string, JsonSchema> {
  const { table, keys, can } = doc;
  const name = table.name;
  // Operation ids must be URL-safe: the row component's key is, and is unique.
  const id = keys.row;
  const row = refTo(keys.row);
  const list = { type: 'array', items: row };
  const base = `/api/v1/db/${encodeURIComponent(name)}`;
  const tag = [name];
  const where = filters(doc.readable);
  const select = selectParam(doc.relations);
  const writable = table.kind === 'table';
  const minimal = prefer('`return=minimal` answers without a body');
  const body = (schema: JsonSchema) => ({ required: true, content: { 'application/json': { schema } } });
  const collection: JsonSchema = {};
  const item: JsonSchema = {};
  const pk = table.pk.length === 1 ? table.pk[0] : null;
  const pkParam = { name: 'pk', in: 'path', required: true, schema: { type: 'string' }, description: `The ${pk} of the row.` };

  if (can.read) {
    collection.get = {
      operationId: `list_${id}`,
      tags: tag,
      summary: `List rows of ${name}`,
      parameters: [
        ...where,
        select,
        {
          name: 'order',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'e.g. `created_at.desc,id.asc.nullslast`.',
        },
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 100 } },
        { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } },
        prefer('`count=exact` fills the total of Content-Range'),
      ],
      responses: {
        '200': json(list, 'The matching rows.', {
          'Content-Range': { schema: { type: 'string' }, description: '`first-last/total` (`*` when not counted).' },
        }),
        ...ERRORS,
      },
    };
    if (pk) {
      item.get = {
        operationId: `get_${id}`,
        tags: tag,
        summary: `Read one row of ${name} by ${pk}`,
        parameters: [pkParam, select],
        responses: { '200': json(row, 'The row.'), ...ERRORS },
      };
    }
  }
  if (writable && can.insert) {
    const insert = refTo(keys.insert);
    collection.post = {
      operationId: `create_${id}`,
      tags: tag,
      summary: `Create one row (object) or several (array, at most 1000) in ${name}`,
      parameters: [
        select,
        prefer(
          '`return=minimal` answers without a body; `resolution=merge-duplicates` (update the row with the same key) or ' +
            '`resolution=ignore-duplicates` (skip it) makes the create an upsert',
        ),
        {
          name: 'on_conflict',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'Upserts: the columns of the unique key a duplicate is found on, comma-separated (default the primary key).',
        },
      ],
      requestBody: body({
        oneOf: [
          insert,
          {
            type: 'array',
            items: insert,
            maxItems: 1000,
            description: 'Give every object the same keys: a key some objects lack is inserted as null in those (not its default).',
          },
        ],
      }),
      responses: {
        '201': json(
          { oneOf: [row, list] },
          'The created row, or rows for an array body; no body with `return=minimal`, nor when an upsert with ' +
            '`resolution=ignore-duplicates` skipped its one row.',
        ),
        ...WRITE_ERRORS,
      },
    };
  }
  if (writable && can.update) {
    const update = refTo(keys.update);
    collection.patch = {
      operationId: `update_${id}`,
      tags: tag,
      summary: `Update the rows of ${name} that match the filters (at least one)`,
      parameters: [...where, select, minimal],
      requestBody: body(update),
      responses: { '200': json(list, 'The updated rows.'), '204': { description: 'Updated (`return=minimal`).' }, ...WRITE_ERRORS },
    };
    if (pk) {
      item.patch = {
        operationId: `update_${id}_by_pk`,
        tags: tag,
        summary: `Update one row of ${name} by ${pk}`,
        parameters: [pkParam, select, minimal],
        requestBody: body(update),
        responses: { '200': json(row, 'The updated row.'), '204': { description: 'Updated (`return=minimal`).' }, ...WRITE_ERRORS },
      };
    }
  }
  if (writable && can.delete) {
    collection.delete = {
      operationId: `delete_${id}`,
      tags: tag,
      summary: `Delete the rows of ${name} that match the filters (at least one)`,
      parameters: [...where, select, minimal],
      responses: { '200': json(list, 'The deleted rows.'), '204': { description: 'Deleted (`return=minimal`).' }, ...WRITE_ERRORS },
    };
    if (pk) {
      item.delete = {
        operationId: `delete_${id}_by_pk`,
        tags: tag,
        summary: `Delete one row of ${name} by ${pk}`,
        parameters: [pkParam, select, minimal],
        responses: { '200': json(row, 'The deleted row.'), '204': { description: 'Deleted (`return=minimal`).' }, ...WRITE_ERRORS },
      };
    }
  }
  const paths: Record<string, JsonSchema> = {};
  if (Object.keys(collection).length) paths[base] = collection;
  if (pk && Object.keys(item).length) paths[`${base}/{pk}`] = item;
  return paths;
}
