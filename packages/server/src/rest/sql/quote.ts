/**
 * The one function that puts a name into SQL text. Names reach it only after the plan
 * stage found them in the schema cache; quoting makes any catalog name safe all the same.
 * @example quoteIdent('my "odd" col') // '"my ""odd"" col"'
 */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A PostgreSQL array literal of text items, every item quoted, so `in` binds one value
 * (`= any($1::text::int4[])`) whatever the items hold: commas, braces, quotes, `NULL`.
 * @example arrayLiteral(['a', 'b,c', 'NULL']) // '{"a","b,c","NULL"}'
 */
export function arrayLiteral(items: string[]): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += `"${items[i].replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
