/** OpenAPI path items of one table: the collection and, with a single-column key, `/{pk}`. */
import { FILTER_OPERATORS } from '@plinth/shared';
import type { TableInfo } from '../schema-cache/index.js';
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

const select = {
  name: 'select',
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description: 'Columns to return, comma-separated (default all). Rows then hold these columns only.',
};

function filters(columns: string[]): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const col of columns) {
    for (const op of FILTER_OPERATORS) {
      out.push({
        name: `${op}.${col}`,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: `Rows where ${col} ${OP_TEXT[op]}.`,
      });
    }
  }
  return out;
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
  readable: string[];
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
      parameters: [select, minimal],
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
        '201': json({ oneOf: [row, list] }, 'The created row, or rows for an array body; no body with `return=minimal`.'),
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
