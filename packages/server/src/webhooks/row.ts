/**
 * PostgreSQL's JSON text of a row image (`to_jsonb(new)` in the change log), split into its
 * top-level fields without parsing the values: a filter reads a field's exact text (an int8 past
 * 2^53, a numeric's digits).
 */

/**
 * The raw JSON text of each top-level field of an object's text, or null when the text is not
 * an object. Values stay text (`"7"` for a number 7, `"\"a\""` for a string).
 * @example splitFields('{"id": 7, "title": "a, b"}') // Map { 'id' => '7', 'title' => '"a, b"' }
 */
export function splitFields(text: string): Map<string, string> | null {
  const fields = new Map<string, string>();
  let i = skip(text, 0);
  if (text[i] !== '{') return null;
  i = skip(text, i + 1);
  if (text[i] === '}') return fields;
  for (;;) {
    if (text[i] !== '"') return null;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return null;
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skip(text, keyEnd);
    if (text[i] !== ':') return null;
    const start = skip(text, i + 1);
    const end = valueEnd(text, start);
    if (end < 0) return null;
    fields.set(key, text.slice(start, end));
    i = skip(text, end);
    if (text[i] === '}') return fields;
    if (text[i] !== ',') return null;
    i = skip(text, i + 1);
  }
}

function skip(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\t' || text[i] === '\r')) i++;
  return i;
}

/** The index after the closing quote of the string starting at `i`, or -1. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '"') return j + 1;
  }
  return -1;
}

/** The index after the value starting at `i` (a string, an object or array, or a bare literal), or -1. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < text.length && text[j] !== ',' && text[j] !== '}' && text[j] !== ' ' && text[j] !== '\n') j++;
  return j > i ? j : -1;
}
