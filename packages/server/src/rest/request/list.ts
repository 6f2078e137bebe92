/** Comma-separated lists with PostgREST's quoting: `a,"b,c",d`. Pure; throws only ApiError. */
import { ApiError } from '../../http/index.js';

/**
 * Splits a comma-separated list; an item in double quotes may hold commas, and `\` escapes
 * the next character inside quotes (PostgREST's syntax).
 * @example splitList('a,"b,c",d', 'in.x') // ['a', 'b,c', 'd']
 */
export function splitList(s: string, param: string): string[] {
  const items: string[] = [];
  if (s === '') return items;
  let i = 0;
  const n = s.length;
  for (;;) {
    if (s[i] === '"') {
      const [buf, j] = quoted(s, i, param);
      if (j < n && s[j] !== ',') {
        throw new ApiError('invalid_value', `"${param}" has text after a quoted item; separate items with commas.`, { parameter: param });
      }
      items.push(buf);
      i = j;
    } else {
      const comma = s.indexOf(',', i);
      const end = comma === -1 ? n : comma;
      items.push(s.slice(i, end));
      i = end;
    }
    if (i >= n) return items;
    i++; // past the comma
    if (i === n) {
      items.push('');
      return items;
    }
  }
}

/** The double-quoted item starting at `s[i]`, unescaped, and the index after its closing quote. */
export function quoted(s: string, i: number, param: string): [string, number] {
  let buf = '';
  let j = i + 1;
  while (j < s.length && s[j] !== '"') {
    if (s[j] === '\\' && j + 1 < s.length) j++;
    buf += s[j++];
  }
  if (j >= s.length) throw new ApiError('invalid_value', `"${param}" has an unterminated quoted item.`, { parameter: param });
  return [buf, j + 1];
}
