/**
 * Relations between the tables of `public`, found from their foreign keys, and how a
 * `select=` names them (docs/api.md, "Embedding"). One home for the naming rule: the plan stage
 * resolves names with `resolveRelation`, the OpenAPI document lists `addressableRelations`.
 *
 * For a foreign key from A (columns a…) to B (columns b…):
 * - from A, B is many-to-one, named `B`, or by the column (`author_id`, and `author` without
 *   `_id`) when the key has one column; a self-reference is named by the column only;
 * - from B, A is one-to-many (one-to-one when a…  are a unique key of A), named `A`;
 * - a join table J with keys to A and to C whose columns are all in J's primary key makes C
 *   many-to-many from A (and A from C), named `C`, through J.
 * A hint (`author!posts_author_id_fkey`) keeps the candidates with that constraint name, that
 * column (one-column keys) or that join table. A view inherits the keys of the columns it shows
 * as they are (catalog.ts, viewForeignKeys: `derived`), named by the tables only.
 */

export interface ForeignKey {
  name: string;
  table: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  /** A key a view inherits from its table (catalog.ts, viewForeignKeys): named by the tables only. */
  derived?: boolean;
}

export interface Relation {
  kind: 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many';
  /** An object (or null), or an array. */
  cardinality: 'one' | 'many';
  /** The table the relation is read from, and the one embedded. */
  source: string;
  target: string;
  /** The foreign key; for many-to-many, the join table's key to the source. */
  fk: ForeignKey;
  /** Column pairs `[source column, target column]` (for many-to-many: `[source column, join column]`). */
  on: Array<[string, string]>;
  /** Many-to-many: the join table, its key to the target, and its pairs `[join column, target column]`. */
  via: { table: string; fk: ForeignKey; on: Array<[string, string]> } | null;
  /** Names that address it (`author`, `authors`…), and hints that pick it among several. */
  names: string[];
  hints: string[];
}

/** What a relation is called in an error or a document: `posts_author_id_fkey`, `via post_tags`. */
export function describeRelation(r: Relation): Record<string, unknown> {
  return {
    relation: r.target,
    cardinality: r.cardinality,
    kind: r.kind,
    constraint: r.via ? r.via.fk.name : r.fk.name,
    columns: r.on.map(([s]) => s),
    ...(r.via ? { via: r.via.table, via_constraint: r.fk.name } : {}),
  };
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
const pairs = (a: string[], b: string[]): Array<[string, string]> => a.map((x, i) => [x, b[i]]);

/**
 * Every relation of every table, by source table.
 * @example relationsOf(fks, uniques).get('posts') // [{ kind: 'many-to-one', target: 'authors', names: ['authors', 'author_id', 'author'], … }, …]
 */
export function relationsOf(
  fks: ForeignKey[],
  uniqueKeys: Map<string, string[][]>,
  primaryKeys: Map<string, string[]>,
): Map<string, Relation[]> {
  const out = new Map<string, Relation[]>();
  const add = (r: Relation) => {
    const list = out.get(r.source) ?? [];
    list.push(r);
    out.set(r.source, list);
  };
  for (const fk of fks) {
    const self = fk.table === fk.refTable;
    const col = fk.columns.length === 1 ? fk.columns[0] : null;
    const byColumn = col === null || fk.derived ? [] : col.length > 3 && col.endsWith('_id') ? [col.slice(0, -3), col] : [col];
    add({
      kind: 'many-to-one',
      cardinality: 'one',
      source: fk.table,
      target: fk.refTable,
      fk,
      on: pairs(fk.columns, fk.refColumns),
      via: null,
      names: self ? byColumn : [fk.refTable, ...byColumn],
      hints: col === null ? [fk.name] : [fk.name, col],
    });
    const unique = (uniqueKeys.get(fk.table) ?? []).some((k) => sameSet(k, fk.columns));
    add({
      kind: unique ? 'one-to-one' : 'one-to-many',
      cardinality: unique ? 'one' : 'many',
      source: fk.refTable,
      target: fk.table,
      fk,
      on: pairs(fk.refColumns, fk.columns),
      via: null,
      names: [fk.table],
      hints: col === null ? [fk.name] : [fk.name, col],
    });
  }
  // Join tables: two keys of one table, to A and to C, all their columns in its primary key.
  const byTable = new Map<string, ForeignKey[]>();
  for (const fk of fks) if (!fk.derived) byTable.set(fk.table, [...(byTable.get(fk.table) ?? []), fk]);
  for (const [join, keys] of byTable) {
    const pk = primaryKeys.get(join) ?? [];
    const inPk = keys.filter((k) => k.refTable !== join && k.columns.every((c) => pk.includes(c)));
    for (const toSource of inPk) {
      for (const toTarget of inPk) {
        if (toSource === toTarget) continue;
        add({
          kind: 'many-to-many',
          cardinality: 'many',
          source: toSource.refTable,
          target: toTarget.refTable,
          fk: toSource,
          on: pairs(toSource.refColumns, toSource.columns),
          via: { table: join, fk: toTarget, on: pairs(toTarget.columns, toTarget.refColumns) },
          names: [toTarget.refTable],
          // Not the key to the source: for a self-join (followers of users) it names the other direction.
          hints: [join, toTarget.name],
        });
      }
    }
  }
  return out;
}

/**
 * The candidates a name (and an optional hint) addresses. Without a hint, a foreign key's
 * constraint name addresses its relation too (`best_friends_first_user_fkey(*)`, PostgREST's
 * embedding by constraint), in either direction; it is not one of the names a relation is listed by.
 */
export function candidates(relations: Relation[], name: string, hint: string | null): Relation[] {
  const named = relations.filter((r) => r.names.includes(name) && (hint === null || r.hints.includes(hint)));
  if (named.length > 0 || hint !== null) return named;
  return relations.filter((r) => r.via === null && !r.fk.derived && r.fk.name === name);
}

/**
 * How to write each relation of a table unambiguously in `select=`: every name that addresses
 * exactly one relation, and its first name (the table's, but for self-references) with each hint
 * that does (`authors!posts_editor_id_fkey`, the form PostgREST users know).
 * @example addressableRelations(rels).get('author') // { kind: 'many-to-one', target: 'authors', … }
 */
export function addressableRelations(relations: Relation[]): Map<string, Relation> {
  const out = new Map<string, Relation>();
  for (const r of relations) {
    for (const name of r.names) if (candidates(relations, name, null).length === 1) out.set(name, r);
    const first = r.names[0];
    if (first === undefined) continue;
    for (const hint of r.hints) if (candidates(relations, first, hint).length === 1) out.set(`${first}!${hint}`, r);
  }
  return out;
}

/**
 * The shortest unambiguous way to write a relation (`authors!posts_editor_id_fkey`), for errors.
 * @example spelling(rels, r) // 'authors!posts_editor_id_fkey'
 */
export function spelling(relations: Relation[], r: Relation): string {
  for (const name of r.names) if (candidates(relations, name, null).length === 1) return name;
  for (const name of r.names) for (const hint of r.hints) if (candidates(relations, name, hint).length === 1) return `${name}!${hint}`;
  return `${r.names[0] ?? r.target}!${r.hints[0]}`;
}
