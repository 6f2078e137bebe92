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

const ERRORS = {
  '400': { $ref: '#/components/responses/Error' },
  '401': { $ref: '#/components/responses/Error' },
  '403': { $ref: '#/components/responses/Error' },
  '404': { $ref: '#/components/responses/Error' },
};

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
  description: 'Columns to return, comma-separated (default all).',
};

function filters(table: TableInfo): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const col of table.columnList) {
    for (const op of FILTER_OPERATORS) {
      out.push({
        name: `${op}.${col.name}`,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: `Rows where ${col.name} ${OP_TEXT[op]}.`,
      });
    }
  }
  return out;
}

function json(schema: JsonSchema, description: string, headers?: JsonSchema): JsonSchema {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

/**
 * The path items of a table, keyed by path.
 * @example tablePaths(todos) // { '/api/v1/db/todos': { get, post, patch, delete }, '/api/v1/db/todos/{pk}': {...} }
 */
export function tablePaths(table: TableInfo): Record<string, JsonSchema> {
  const name = table.name;
  // A JSON pointer (`~` and `/` escaped) inside a URI fragment (percent-encoded).
  const ref = { $ref: `#/components/schemas/${encodeURIComponent(name.replaceAll('~', '~0').replaceAll('/', '~1'))}` };
  const list = { type: 'array', items: ref };
  const base = `/api/v1/db/${encodeURIComponent(name)}`;
  const tag = [name];
  const where = filters(table);
  const collection: JsonSchema = {
    get: {
      operationId: `list_${name}`,
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
    },
  };
  const item: JsonSchema = {};
  const pk = table.pk.length === 1 ? table.pk[0] : null;
  const pkParam = { name: 'pk', in: 'path', required: true, schema: { type: 'string' }, description: `The ${pk} of the row.` };
  if (pk) {
    item.get = {
      operationId: `get_${name}`,
      tags: tag,
      summary: `Read one row of ${name}`,
      parameters: [pkParam, select],
      responses: { '200': json(ref, 'The row.'), ...ERRORS },
    };
  }
  if (table.kind === 'table') {
    const body = (schema: JsonSchema) => ({ required: true, content: { 'application/json': { schema } } });
    const minimal = prefer('`return=minimal` answers without a body');
    collection.post = {
      operationId: `create_${name}`,
      tags: tag,
      summary: `Create one row (object) or several (array, at most 1000) in ${name}`,
      parameters: [select, minimal],
      requestBody: body({ oneOf: [ref, { type: 'array', items: ref, maxItems: 1000 }] }),
      responses: {
        '201': json({ oneOf: [ref, list] }, 'The created row, or rows for an array body.'),
        '409': { $ref: '#/components/responses/Error' },
        ...ERRORS,
      },
    };
    collection.patch = {
      operationId: `update_${name}`,
      tags: tag,
      summary: `Update the rows of ${name} that match the filters (at least one)`,
      parameters: [...where, select, minimal],
      requestBody: body(ref),
      responses: { '200': json(list, 'The updated rows.'), '204': { description: 'Updated (return=minimal).' }, ...ERRORS },
    };
    collection.delete = {
      operationId: `delete_${name}`,
      tags: tag,
      summary: `Delete the rows of ${name} that match the filters (at least one)`,
      parameters: [...where, select, minimal],
      responses: { '200': json(list, 'The deleted rows.'), '204': { description: 'Deleted (return=minimal).' }, ...ERRORS },
    };
    if (pk) {
      item.patch = {
        operationId: `update_${name}_by_pk`,
        tags: tag,
        parameters: [pkParam, select, minimal],
        requestBody: body(ref),
        responses: { '200': json(ref, 'The updated row.'), ...ERRORS },
      };
      item.delete = {
        operationId: `delete_${name}_by_pk`,
        tags: tag,
        parameters: [pkParam, select, minimal],
        responses: { '200': json(ref, 'The deleted row.'), ...ERRORS },
      };
    }
  }
  const paths: Record<string, JsonSchema> = { [base]: collection };
  if (pk) paths[`${base}/{pk}`] = item;
  return paths;
}
