/**
 * The one splitter of a change's row image (realtime and webhooks alike): the row as PostgreSQL
 * wrote it (`jsonb::text`), split into its top-level fields without
 * parsing the values: routing reads one or two of them (an owner column, a filter column), and
 * a row goes to a client as PostgreSQL's own text, so an int8 beyond 2^53 or a numeric with 30
 * digits arrives exactly (JSON.parse and JSON.stringify would round them).
 */

/** Field name → the value's JSON text, in the order PostgreSQL wrote them. */
export type RawRow = Map<string, string>;

/** Index just past the JSON string that starts at `i` (which holds `"`). */
function endOfString(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const c = text.charCodeAt(j);
    if (Number.isNaN(c)) throw new Error('unterminated string in a row image');
    if (c === 92 /* \ */) j += 2;
    else if (c === 34 /* " */) return j + 1;
    else j++;
  }
}

/** Index just past the JSON value that starts at `i`. */
function endOfValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return endOfString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const d = text[j];
      if (d === '"') {
        j = endOfString(text, j);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    throw new Error('unterminated value in a row image');
  }
  let j = i;
  while (j < text.length && text[j] !== ',' && text[j] !== '}' && text[j] !== ' ' && text[j] !== '\n') j++;
  if (j === i) throw new Error('a row image has an empty value');
  return j;
}

const skipSpace = (text: string, i: number) => {
  while (text[i] === ' ' || text[i] === '\n' || text[i] === '\t' || text[i] === '\r') i++;
  return i;
};

/**
 * Splits a JSON object's text into its fields, values left as text.
 * @example splitRow('{"id": 9007199254740993, "title": "a, b"}') // Map { 'id' => '9007199254740993', 'title' => '"a, b"' }
 */
export function splitRow(text: string): RawRow {
  const fields: RawRow = new Map();
  let i = skipSpace(text, 0);
  if (text[i] !== '{') throw new Error('a row image is not a JSON object');
  i = skipSpace(text, i + 1);
  if (text[i] === '}') return fields;
  for (;;) {
    if (text[i] !== '"') throw new Error('a row image has a key that is not a string');
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') throw new Error('a row image has a key without a value');
    i = skipSpace(text, i + 1);
    const valueEnd = endOfValue(text, i);
    fields.set(key, text.slice(i, valueEnd));
    i = skipSpace(text, valueEnd);
    if (text[i] === '}') return fields;
    if (text[i] !== ',') throw new Error('a row image has a malformed separator');
    i = skipSpace(text, i + 1);
  }
}

/**
 * The fields of an object's text, or null when the text is not a JSON object (what a webhook
 * filter meets in a row image it cannot read: the delivery fails with the reason).
 * @example splitFields('{"id": 7, "title": "a, b"}') // Map { 'id' => '7', 'title' => '"a, b"' }
 */
export function splitFields(text: string): RawRow | null {
  try {
    return splitRow(text);
  } catch {
    return null;
  }
}

/**
 * The JSON text of the fields named in `columns` (all of them when null), in the row's order.
 * @example rowText(splitRow('{"a": 1, "b": 2}'), new Set(['b'])) // '{"b":2}'
 */
export function rowText(row: RawRow, columns: ReadonlySet<string> | null): string {
  let out = '{';
  for (const [key, value] of row) {
    if (columns && !columns.has(key)) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${value}`;
  }
  return `${out}}`;
}
