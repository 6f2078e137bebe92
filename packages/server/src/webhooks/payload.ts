/**
 * The body of a delivery (docs/webhooks.md "The request"): `{type, table, seq, record,
 * old_record, commit_time}`, written by PostgreSQL around the row images of the change log as it
 * renders them, in the statement that makes the deliveries (fanout.ts): the rows never travel to
 * Node and back. A body over 256 KiB carries the primary key in place of each row and
 * `"truncated": true`: a receiver reads the row through the REST API, and no endpoint is sent
 * megabytes per change.
 */
import { isoSql } from '../lib/index.js';

/** Bodies above this many bytes carry the primary key only. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * SQL for a change `c` (columns of realtime.read) → `body text, truncated boolean`, as a
 * LATERAL subquery. `pkParam` is the parameter holding `{"<table>": ["<pk column>", …]}` (jsonb).
 * @example `select b.body from realtime.read($1, $2) c cross join lateral (${bodySql('$3')}) b`
 */
export function bodySql(pkParam: string): string {
  const head = `'{"type":"' || c.op || '","table":' || to_json(c.table_name)::text || ',"seq":' || c.seq || ',"record":'`;
  const tail = `',"commit_time":"' || ${isoSql('c.written_at')} || '"'`;
  const keyOf = (image: string) =>
    `coalesce((select jsonb_object_agg(k, ${image} -> k) from jsonb_array_elements_text(${pkParam}::jsonb -> c.table_name) k)::text, 'null')`;
  return `select case when octet_length(f.body) <= ${MAX_BODY_BYTES} then f.body
      else ${head} || case when c."row" is null then 'null' else ${keyOf('c."row"')} end
        || ',"old_record":' || case when c.old is null then 'null' else ${keyOf('c.old')} end || ${tail} || ',"truncated":true}' end as body,
    octet_length(f.body) > ${MAX_BODY_BYTES} as truncated
    from (select ${head} || coalesce(c."row"::text, 'null') || ',"old_record":' || coalesce(c.old::text, 'null') || ${tail} || '}' as body) f`;
}
