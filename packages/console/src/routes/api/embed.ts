/**
 * The relation picker's edits of a `select=` value (docs/api.md "Embedding related rows"):
 * the top-level items of the select, an embedded relation added as `name(*)` or taken out,
 * the rest of what the user typed kept as typed. No DOM: unit-tested in Node.
 */

/** The top-level items of a select (commas inside parentheses or quotes belong to their item). */
export function selectItems(select: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const ch of select) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && ch === '(') depth++;
    if (!quoted && ch === ')') depth = Math.max(0, depth - 1);
    if (!quoted && depth === 0 && ch === ',') {
      if (current.trim()) items.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) items.push(current.trim());
  return items;
}

/**
 * The relation an item embeds (`alias:name!hint(cols)` → `name!hint`), or null for a column.
 * @example embeddedName('writer:authors!posts_editor_id_fkey(name)') // 'authors!posts_editor_id_fkey'
 */
export function embeddedName(item: string): string | null {
  const open = item.indexOf('(');
  if (open < 0) return null;
  const head = item.slice(0, open).trim();
  const colon = head.lastIndexOf(':');
  return (colon >= 0 ? head.slice(colon + 1) : head).replace(/^\.\.\./, '').trim();
}

/** Which of `names` the select embeds now. */
export function embedded(select: string, names: string[]): Set<string> {
  const found = new Set(selectItems(select).map(embeddedName));
  return new Set(names.filter((n) => found.has(n)));
}

/**
 * The select with relation `name` embedded (as `name(*)`, after the row's own columns: `*`
 * when nothing chose them) or taken out.
 * @example toggleEmbed('', 'authors', true) // '*,authors(*)'
 * @example toggleEmbed('id,title,authors(name)', 'authors', false) // 'id,title'
 */
export function toggleEmbed(select: string, name: string, on: boolean): string {
  const items = selectItems(select);
  const rest = items.filter((i) => embeddedName(i) !== name);
  if (!on) return rest.length === 1 && rest[0] === '*' ? '' : rest.join(',');
  const columns = rest.filter((i) => embeddedName(i) === null);
  return [...(columns.length ? [] : ['*']), ...rest, `${name}(*)`].join(',');
}
