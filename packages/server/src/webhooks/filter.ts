/**
 * A webhook's `filter`: REST's operators (rest/ parses them; docs/api.md "Filters"), ANDed,
 * tested on the row image of each change (the row as written; the old row for a delete) in
 * memory, without a query per change. Each value is cast by PostgreSQL once, when the filter is
 * compiled (a value that does not fit its column is refused at save), and written back as the
 * JSON a row image holds for it; a change's field is then compared with it by type, exactly as
 * PostgreSQL compares (numbers as numbers, instants as instants whatever the offset). Operators
 * whose result depends on the database's collation (ordering text) or on a type's own rules
 * (json, arrays, ranges, citext…) are refused at save with the list of what works, never decided
 * differently from a REST read. `ilike` lowercases both sides as the database does (PostgreSQL
 * lowers pattern and text, then matches): ASCII letters only under a `C` ctype, Unicode's simple
 * lowercase mapping under a UTF-8 one (`C.UTF-8`, glibc, PGlite); which one is asked once per
 * compile, and a database that folds some other way has `ilike` refused. `not.` and `or=(…)` /
 * `and=(…)` groups are decided with SQL's three-valued logic (a comparison with NULL is unknown,
 * and `not` of unknown is still unknown), so a row matches exactly when a REST read returns it;
 * `fts` and JSON paths need the database and are refused.
 */
import { dbErrorKind, type Queryable } from '../db/index.js';
import { likeWildcardProblem, likeMatch, parseLike } from '../changes/index.js';
import { type ColumnInfo, type Condition, type Filter, parseQuery, type TableInfo } from '../rest/index.js';

/** A filter that cannot be used: its message names the filter's problem (shown on the `filter` field). */
export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

export interface RowFilter {
  /** Decides on a row image's fields (raw JSON text per column, row.ts); null: no row. */
  test(field: (column: string) => string | undefined): boolean;
  columns: string[];
}

export const EVERY_ROW: RowFilter = { test: () => true, columns: [] };

type Family = 'integer' | 'numeric' | 'float' | 'boolean' | 'text' | 'uuid' | 'enum' | 'date' | 'timestamp' | 'timestamptz' | 'other';

function familyOf(col: ColumnInfo): Family {
  if (col.category === 'E') return 'enum';
  switch (col.udt) {
    case 'int2':
    case 'int4':
    case 'int8':
      return 'integer';
    case 'numeric':
      return 'numeric';
    case 'float4':
    case 'float8':
      return 'float';
    case 'bool':
      return 'boolean';
    case 'text':
    case 'varchar':
    case 'bpchar':
      return 'text';
    case 'uuid':
      return 'uuid';
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    case 'timestamptz':
      return 'timestamptz';
    default:
      return 'other';
  }
}

const ORDERED = new Set<Family>(['integer', 'numeric', 'float', 'uuid', 'date', 'timestamp', 'timestamptz']);
const EQUALITY = new Set<Family>([...ORDERED, 'boolean', 'text', 'enum']);

/** What a filter on this column may use, for the refusal's message. */
function supported(f: Family): string {
  if (ORDERED.has(f)) return 'eq, neq, in, gt, lt, gte, lte, is.null';
  if (f === 'text') return 'eq, neq, in, like, ilike, is.null';
  if (f === 'boolean') return 'eq, neq, in, is';
  if (f === 'enum') return 'eq, neq, in, is.null';
  return 'is.null';
}

function allowed(op: Filter['op'], f: Family, value: string): boolean {
  switch (op) {
    case 'fts':
      return false;
    case 'is':
      return value === 'null' || f === 'boolean';
    case 'eq':
    case 'neq':
    case 'in':
      return EQUALITY.has(f);
    case 'like':
    case 'ilike':
      return f === 'text';
    default:
      return ORDERED.has(f);
  }
}

/** A comparable form of a field's JSON text; null for SQL NULL. */
type Key = bigint | number | string | boolean | Decimal | null;
interface Decimal {
  /** -Infinity, +Infinity, NaN (which PostgreSQL orders above everything), or a finite number. */
  special: -1 | 1 | 2 | 0;
  negative: boolean;
  /** Digits without leading zeros (integer part) and trailing zeros (fraction). */
  int: string;
  frac: string;
}

function decimal(raw: string): Decimal {
  if (raw.startsWith('"')) {
    const s = JSON.parse(raw) as string;
    return { special: s === 'NaN' ? 2 : s.startsWith('-') ? -1 : 1, negative: false, int: '', frac: '' };
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(raw);
  if (!m) throw new FilterError(`unexpected numeric text ${raw.slice(0, 40)}`);
  const int = m[2].replace(/^0+/, '');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  return { special: 0, negative: m[1] === '-' && (int !== '' || frac !== ''), int, frac };
}

function compareDecimal(a: Decimal, b: Decimal): number {
  const rank = (d: Decimal) => (d.special === 0 ? 0 : d.special === -1 ? -1 : d.special === 1 ? 1 : 2);
  if (rank(a) !== rank(b) || a.special !== 0) return Math.sign(rank(a) - rank(b));
  if (a.negative !== b.negative) return a.negative ? -1 : 1;
  const sign = a.negative ? -1 : 1;
  if (a.int.length !== b.int.length) return sign * Math.sign(a.int.length - b.int.length);
  if (a.int !== b.int) return sign * (a.int < b.int ? -1 : 1);
  const len = Math.max(a.frac.length, b.frac.length);
  const fa = a.frac.padEnd(len, '0');
  const fb = b.frac.padEnd(len, '0');
  return fa === fb ? 0 : sign * (fa < fb ? -1 : 1);
}

/** float4/float8 as PostgreSQL orders them: NaN equal to itself and above everything. */
function float(raw: string): number {
  if (raw.startsWith('"')) {
    const s = JSON.parse(raw) as string;
    return s === 'NaN' ? Number.NaN : s.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  return Number(raw);
}

function compareFloat(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Number.isNaN(a) ? 1 : -1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/**
 * A date or timestamp's JSON text (`2024-01-02`, `2024-01-02T03:04:05.123456+05:30`, `… BC`,
 * `infinity`) as microseconds since 1970 (a bigint, so no precision is lost); ±Infinity as
 * numbers. An offset, when there is one, is taken into account: the same instant compares equal
 * whatever the session's time zone was when the row was written.
 */
function instant(raw: string): bigint | number {
  const s = JSON.parse(raw) as string;
  if (s === 'infinity') return Number.POSITIVE_INFINITY;
  if (s === '-infinity') return Number.NEGATIVE_INFINITY;
  const m = /^(\d{4,})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?(?:([+-])(\d\d)(?::(\d\d)(?::(\d\d))?)?)?( BC)?$/.exec(s);
  if (!m) throw new FilterError(`unexpected date/time text ${s.slice(0, 40)}`);
  let year = Number(m[1]);
  if (m[12]) year = 1 - year;
  const d = new Date(0);
  d.setUTCFullYear(year, Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), 0);
  let micros = BigInt(d.getTime()) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0') || '0');
  if (m[8]) {
    const offset = (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0)) * 1_000_000;
    micros -= BigInt(m[8] === '-' ? -offset : offset);
  }
  return micros;
}

function compareInstant(a: bigint | number, b: bigint | number): number {
  if (typeof a === 'number' || typeof b === 'number') {
    const x = typeof a === 'number' ? a : 0;
    const y = typeof b === 'number' ? b : 0;
    return x === y ? 0 : x < y ? -1 : 1;
  }
  return a === b ? 0 : a < b ? -1 : 1;
}

/** A field's raw JSON text as the comparable key of its family (null for SQL NULL). */
function keyOf(family: Family, udt: string, raw: string): Key {
  if (raw === 'null') return null;
  switch (family) {
    case 'integer':
      return BigInt(raw);
    case 'numeric':
      return decimal(raw);
    case 'float':
      return float(raw);
    case 'boolean':
      return raw === 'true';
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return instant(raw);
    default: {
      const s = JSON.parse(raw) as string;
      // bpchar compares without its padding (char(4) 'ab' is 'ab  ' in the row image); LIKE on it
      // sees the padding (bpcharlike), so patterns get the text as stored.
      return udt === 'bpchar' ? s.replace(/ +$/, '') : s;
    }
  }
}

function compare(family: Family, a: Key, b: Key): number {
  switch (family) {
    case 'numeric':
      return compareDecimal(a as Decimal, b as Decimal);
    case 'float':
      return compareFloat(a as number, b as number);
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return compareInstant(a as bigint | number, b as bigint | number);
    default:
      return a === b ? 0 : (a as bigint | string) < (b as bigint | string) ? -1 : 1;
  }
}

/** How the database lowercases text for ILIKE. */
type Folding = 'ascii' | 'unicode';
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
/** Unicode's simple lowercase mapping, character by character (no final-sigma or dotted-I context rules). */
const unicodeLower = (s: string) => Array.from(s, (c) => (c === '\u0130' ? 'i' : c.toLowerCase())).join('');
/** À, É, dotted capital I, capital sigma, the Kelvin sign: where the foldings differ. */
const FOLD_PROBE = '\u00c0\u00c9\u0130\u03a3\u212aQ';

/** SQL's three-valued answer: null is unknown (a comparison with NULL). */
type Tri = boolean | null;
type Test = (raw: string | undefined) => Tri;
/** A condition over the row's fields; only `true` matches. */
type Node = (field: (column: string) => string | undefined) => Tri;

/** At most this many conditions, groups' included, and this deep: a filter is tested per change. */
const MAX_CONDITIONS = 20;
const MAX_DEPTH = 4;

/** The filters of a condition tree, depth first (each one checked and cast once). */
function leaves(conds: Condition[], depth: number, out: Filter[]): Filter[] {
  if (depth > MAX_DEPTH) throw new FilterError(`A webhook filter nests or/and groups at most ${MAX_DEPTH} deep.`);
  for (const c of conds) {
    if ('items' in c) leaves(c.items, depth + 1, out);
    else out.push(c);
  }
  return out;
}

/**
 * Parses a filter and checks it against the table: columns exist, each operator suits its
 * column's type, each value fits (cast once by PostgreSQL). Throws FilterError with a message for
 * the `filter` field.
 * @example const f = await compileFilter(db, table, 'eq.status=paid&gt.total=100'); f.test((c) => fields.get(c))
 */
export async function compileFilter(db: Queryable, table: TableInfo, text: string | null): Promise<RowFilter> {
  if (text === null || text.trim() === '') return EVERY_ROW;
  let tree: Condition[];
  try {
    const ast = parseQuery(text, { maxRows: 1 });
    if (
      ast.select ||
      ast.order.length ||
      ast.limit !== null ||
      ast.offset !== null ||
      ast.columns ||
      ast.onConflict ||
      ast.embedded.size > 0
    ) {
      throw new FilterError('A webhook filter takes filters only (<operator>.<column>=<value>, joined with &, and or=(…)/and=(…) groups).');
    }
    tree = ast.filters;
  } catch (err) {
    if (err instanceof FilterError) throw err;
    throw new FilterError((err as Error).message);
  }
  const filters = leaves(tree, 0, []);
  if (filters.length > MAX_CONDITIONS) throw new FilterError(`A webhook filter takes at most ${MAX_CONDITIONS} conditions.`);
  const planned = filters.map((f) => {
    if (/->|::/.test(f.column)) throw new FilterError(`${f.column}: JSON paths cannot be used in a webhook filter; filter on a column.`);
    const col = table.columns.get(f.column);
    if (!col) throw new FilterError(`The table "${table.name}" has no column "${f.column}".`);
    const wild = f.op === 'like' || f.op === 'ilike' ? likeWildcardProblem(f.value) : null;
    if (wild) throw new FilterError(`${f.op}.${f.column}: ${wild}`);
    const family = familyOf(col);
    const value = f.op === 'is' ? f.value : '';
    if (!allowed(f.op, family, value)) {
      throw new FilterError(
        `${f.op}.${f.column} cannot be used in a webhook filter: on a ${col.type} column a webhook filter takes ${supported(family)}` +
          (family === 'text' && f.op !== 'is' ? ' (ordering text depends on the database collation)' : '') +
          '.',
      );
    }
    return { f, col, family };
  });

  // Every compared value cast to its column's type and written back as the JSON a row image
  // holds for it: one statement for the whole filter.
  const casts: string[] = [];
  const params: string[] = [];
  const slots = planned.map(({ f, col }) => {
    if (f.op === 'is' || f.op === 'like' || f.op === 'ilike' || f.op === 'fts') return [];
    const items = f.op === 'in' ? f.value : [f.value];
    return items.map((v) => {
      params.push(v);
      casts.push(`to_jsonb($${params.length}::text::${col.castType})::text`);
      return casts.length - 1;
    });
  });
  // ILIKE lowers both sides as the database's ctype does: asked with the same statement.
  const ilike = planned.some((p) => p.f.op === 'ilike');
  if (ilike) {
    params.push(FOLD_PROBE);
    casts.push(`lower($${params.length})`);
  }
  let canonical: string[] = [];
  let folding: Folding | null = null;
  if (casts.length > 0) {
    try {
      const { rows } = await db.query<{ v: string }>(`select json_build_array(${casts.join(', ')})::text as v`, params);
      canonical = JSON.parse(rows[0]?.v ?? '[]') as string[];
      if (ilike) {
        const lowered = canonical.pop();
        folding = lowered === asciiLower(FOLD_PROBE) ? 'ascii' : lowered === unicodeLower(FOLD_PROBE) ? 'unicode' : null;
        if (!folding)
          throw new FilterError(
            'ilike cannot be used in a webhook filter on this database: its case folding (ctype) is neither C nor UTF-8; use like.',
          );
      }
    } catch (err) {
      const kind = dbErrorKind(err);
      if (kind === 'invalid_value' || kind === 'nul_in_text')
        throw new FilterError(`A value of the filter does not fit its column's type: ${(err as Error).message}`);
      throw err;
    }
  }

  const tests = planned.map(({ f, col, family }, i): { column: string; test: Test } => {
    const t = leafTest(f, col, family, i);
    if (!f.negate) return t;
    return { column: t.column, test: (raw) => not(t.test(raw)) };
  });
  const byFilter = new Map(filters.map((f, i) => [f, tests[i]]));
  const node = (c: Condition): Node => {
    if (!('items' in c)) {
      const t = byFilter.get(c) as { column: string; test: Test };
      return (field) => t.test(field(t.column));
    }
    const items = c.items.map(node);
    const all: Node = c.op === 'and' ? (field) => and(items.map((n) => n(field))) : (field) => or(items.map((n) => n(field)));
    return c.negate ? (field) => not(all(field)) : all;
  };
  const root = tree.map(node);
  return {
    columns: [...new Set(planned.map((p) => p.col.name))],
    test: (field) => and(root.map((n) => n(field))) === true,
  };

  function leafTest(f: Filter, col: ColumnInfo, family: Family, i: number): { column: string; test: Test } {
    const key = (raw: string) => keyOf(family, col.udt, raw);
    const values = slots[i].map((k) => key(canonical[k]));
    const read = (raw: string | undefined): Key => (raw === undefined ? null : key(raw));
    switch (f.op) {
      // IS is two-valued: never unknown.
      case 'is':
        if (f.value === 'null') return { column: col.name, test: (raw) => read(raw) === null };
        if (f.value === 'unknown') return { column: col.name, test: (raw) => read(raw) === null };
        return { column: col.name, test: (raw) => read(raw) === (f.value === 'true') };
      case 'like':
      case 'ilike': {
        const lower = f.op === 'like' ? (s: string) => s : folding === 'ascii' ? asciiLower : unicodeLower;
        const pattern = parseLike(lower(f.value));
        return {
          column: col.name,
          test: (raw) => (raw === undefined || raw === 'null' ? null : likeMatch(pattern, lower(JSON.parse(raw) as string))),
        };
      }
      case 'in':
        return {
          column: col.name,
          test: (raw) => {
            const v = read(raw);
            return v === null ? null : values.some((x) => compare(family, v, x) === 0);
          },
        };
      default: {
        const want = values[0];
        const op = f.op;
        return {
          column: col.name,
          test: (raw) => {
            const v = read(raw);
            if (v === null) return null;
            const c = compare(family, v, want);
            return op === 'eq'
              ? c === 0
              : op === 'neq'
                ? c !== 0
                : op === 'gt'
                  ? c > 0
                  : op === 'lt'
                    ? c < 0
                    : op === 'gte'
                      ? c >= 0
                      : c <= 0;
          },
        };
      }
    }
  }
}

const not = (a: Tri): Tri => (a === null ? null : !a);
/** SQL AND: false wins, then unknown. */
const and = (xs: Tri[]): Tri => (xs.includes(false) ? false : xs.includes(null) ? null : true);
/** SQL OR: true wins, then unknown. */
const or = (xs: Tri[]): Tri => (xs.includes(true) ? true : xs.includes(null) ? null : false);
