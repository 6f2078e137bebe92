/**
 * The one evaluator of a filter on a change's row image, for realtime subscriptions and database
 * webhooks alike (each keeps a thin adapter: realtime/filter.ts, webhooks/filter.ts). A filter is
 * REST's operators (rest/ parses them; docs/api.md "Filters"): leaves ANDed at the top, and
 * `not.` and `or=(…)`/`and=(…)` groups where the consumer takes them. Its verdict on a row is
 * `true`, `false`, or `null`: only PostgreSQL can tell (the consumer asks it, or refused the
 * filter at compile time so that it never happens).
 *
 * Each compared value is cast by PostgreSQL once, when the filter is compiled (one statement for
 * the whole filter), and written back as the JSON a row image holds for it; a change's field is
 * then compared with it by type, as PostgreSQL compares: integers as integers, numeric as
 * decimals (trailing zeros, NaN above everything), floats as doubles, dates and timestamps as
 * instants whatever the offset they were written with, bpchar without its padding. `like` uses
 * the linear matcher (like.ts); `ilike` lowers both sides as the database does (ASCII letters
 * under a `C` ctype, Unicode's simple lowercase mapping under a UTF-8 one; asked once per compile
 * with the casts). Operators whose result depends on the collation (ordering text) or on a type's
 * own rules (json, arrays, ranges…) are never decided here: their leaf is `null`.
 *
 * Each leaf costs one pass over its field (like/ilike: length × pattern width at most, and
 * LIKE_MEMORY_BUDGET bounds that where the consumer can ask PostgreSQL instead); no RegExp ever
 * sees a value but the fixed ones reading PostgreSQL's own number and date texts, which are
 * linear. The property test (filter.test.ts) holds every operator to PostgreSQL's own on random
 * typed rows.
 */
import { dbErrorKind, type Queryable } from '../db/index.js';
import type { ColumnInfo, Condition, Filter, TableInfo } from '../rest/index.js';
import { LIKE_MEMORY_BUDGET, likeMatchChars, likeWildcardProblem, parseLike } from './like.js';

/** true, false, or null when only PostgreSQL can tell. */
export type Verdict = boolean | null;

/** Why a filter cannot be compiled; each consumer words it for its own answer. */
export class FilterProblem extends Error {
  constructor(
    readonly kind: 'column_not_found' | 'pattern' | 'invalid_value' | 'operator',
    message: string,
    readonly column?: string,
  ) {
    super(message);
    this.name = 'FilterProblem';
  }
}

export type Family =
  | 'integer'
  | 'numeric'
  | 'float'
  | 'boolean'
  | 'text'
  | 'uuid'
  | 'enum'
  | 'date'
  | 'timestamp'
  | 'timestamptz'
  | 'other';

/** The family a column's values are compared in. */
export function familyOf(col: ColumnInfo): Family {
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

const ORDERED = new Set<Family>(['integer', 'numeric', 'float', 'boolean', 'uuid', 'date', 'timestamp', 'timestamptz']);
const EQUALITY = new Set<Family>([...ORDERED, 'text', 'enum']);

/** The operators decided in memory on a column of this family (for a refusal's message). */
export function memoryOperators(f: Family): string {
  if (f === 'boolean') return 'eq, neq, in, gt, lt, gte, lte, is';
  if (ORDERED.has(f)) return 'eq, neq, in, gt, lt, gte, lte, is.null';
  if (f === 'text') return 'eq, neq, in, like, ilike, is.null';
  if (f === 'enum') return 'eq, neq, in, is.null';
  return 'is.null';
}

/** The operators the evaluator takes (REST's core comparisons); any other is refused at compile. */
export const EVALUATED_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'] as const;
export type EvaluatedOperator = (typeof EVALUATED_OPERATORS)[number];
const EVALUATED = new Set<string>(EVALUATED_OPERATORS);
export const isEvaluated = (op: string): op is EvaluatedOperator => EVALUATED.has(op);

/**
 * Whether the evaluator decides this operator on this family in memory (`ilike` also needs a
 * database whose folding it knows, which compile finds out). Others are `null` verdicts.
 */
export function decidedInMemory(op: string, f: Family, isValue?: string): boolean {
  switch (op) {
    case 'is':
      return isValue === 'null' || f === 'boolean';
    case 'eq':
    case 'neq':
    case 'in':
      return EQUALITY.has(f);
    case 'like':
    case 'ilike':
      return f === 'text';
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return ORDERED.has(f);
    default:
      return false;
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

/** A JSON text that is not what PostgreSQL writes for the column's type: ask PostgreSQL. */
class Unreadable extends Error {}

/** Strips leading `0`s (or trailing ones): a loop, not a RegExp (linear whatever the digits). */
function stripZeros(s: string, end: boolean): string {
  if (end) {
    let j = s.length;
    while (j > 0 && s.charCodeAt(j - 1) === 48) j--;
    return s.slice(0, j);
  }
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === 48) i++;
  return s.slice(i);
}

function decimal(raw: string): Decimal {
  if (raw.startsWith('"')) {
    const s = JSON.parse(raw) as string;
    if (s === 'NaN') return { special: 2, negative: false, int: '', frac: '' };
    if (s === 'Infinity' || s === '-Infinity') return { special: s.startsWith('-') ? -1 : 1, negative: false, int: '', frac: '' };
    throw new Unreadable();
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(raw);
  if (!m) throw new Unreadable();
  const int = stripZeros(m[2], false);
  const frac = stripZeros(m[3] ?? '', true);
  return { special: 0, negative: m[1] === '-' && (int !== '' || frac !== ''), int, frac };
}

function compareDecimal(a: Decimal, b: Decimal): number {
  if (a.special !== b.special || a.special !== 0) return Math.sign(a.special - b.special);
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
    if (s === 'NaN') return Number.NaN;
    if (s === 'Infinity' || s === '-Infinity') return s.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    throw new Unreadable();
  }
  const n = Number(raw);
  if (Number.isNaN(n)) throw new Unreadable();
  return n;
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
  if (!m) throw new Unreadable();
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

/** bpchar compares without its trailing spaces (a loop: `/ +$/` is quadratic on inner runs of spaces). */
function trimSpaces(s: string): string {
  let j = s.length;
  while (j > 0 && s.charCodeAt(j - 1) === 32) j--;
  return s.slice(0, j);
}

/** A field's raw JSON text as the comparable key of its family (null for SQL NULL). */
function keyOf(family: Family, udt: string, raw: string): Key {
  if (raw === 'null') return null;
  switch (family) {
    case 'integer':
      if (!/^-?\d+$/.test(raw)) throw new Unreadable();
      return BigInt(raw);
    case 'numeric':
      return decimal(raw);
    case 'float':
      return float(raw);
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new Unreadable();
      return raw === 'true';
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return instant(raw);
    default: {
      if (!raw.startsWith('"')) throw new Unreadable();
      const s = JSON.parse(raw) as string;
      // bpchar compares without its padding (char(4) 'ab' is 'ab  ' in the row image); LIKE on it
      // sees the padding (bpcharlike), so patterns get the text as stored.
      return udt === 'bpchar' ? trimSpaces(s) : s;
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
/**
 * Unicode's simple lowercase mapping, character by character (no final-sigma or dotted-I context
 * rules). The whole string's toLowerCase is the same but for those two, and much cheaper.
 */
const unicodeLower = (s: string) =>
  s.includes('\u0130') || s.includes('\u03a3') ? Array.from(s, (c) => (c === '\u0130' ? 'i' : c.toLowerCase())).join('') : s.toLowerCase();
/** À, É, dotted capital I, capital sigma, the Kelvin sign: where the foldings differ. */
const FOLD_PROBE = '\u00c0\u00c9\u0130\u03a3\u212aQ';

/** Each database's ILIKE folding, once asked (a database's ctype does not change while it runs). */
const foldings = new WeakMap<object, Folding | null>();

/**
 * A field's text as the code points like/ilike match, for the last field seen: one change's field
 * goes through every subscription's filter in a row, so it is parsed and lowered once, not once
 * per subscriber.
 */
let memo: { raw: string; fold: Folding | 'none'; chars: string[] } | null = null;
function charsOf(raw: string, fold: Folding | 'none'): string[] {
  if (memo !== null && memo.fold === fold && memo.raw === raw) return memo.chars;
  const text = JSON.parse(raw) as string;
  const chars = Array.from(fold === 'none' ? text : fold === 'ascii' ? asciiLower(text) : unicodeLower(text));
  memo = { raw, fold, chars };
  return chars;
}

/**
 * Four answers while a tree is decided: SQL's true, false and unknown (a comparison with NULL;
 * `not` of it is still unknown), and `ask` (only PostgreSQL can tell), which is some one of the
 * three: `and` with a false is false whatever it is, `or` with a true is true.
 */
const ASK = 2 as const;
type Tri = boolean | null | typeof ASK;
type Leaf = (raw: string | undefined) => Tri;
type Node = (field: (column: string) => string | undefined) => Tri;

const not = (a: Tri): Tri => (a === null || a === ASK ? a : !a);
function and(xs: Tri[]): Tri {
  let out: Tri = true;
  for (const x of xs) {
    if (x === false) return false;
    if (x === ASK) out = ASK;
    else if (x === null && out === true) out = null;
  }
  return out;
}
function or(xs: Tri[]): Tri {
  let out: Tri = false;
  for (const x of xs) {
    if (x === true) return true;
    if (x === ASK) out = ASK;
    else if (x === null && out === false) out = null;
  }
  return out;
}

export interface EvaluatorOptions {
  /**
   * Character comparisons one like/ilike may spend on one field (value length × pattern width);
   * past it the leaf is `null` (ask PostgreSQL). Infinity: always decided here (still n·m).
   */
  likeBudget?: number;
}

export interface RowEvaluator {
  /** Columns the filter reads. */
  columns: string[];
  /** Whether every leaf is decided in memory (else some verdicts are null). */
  inMemory: boolean;
  /**
   * The verdict on a row image's fields (each value's JSON text, row.ts; undefined: the image
   * lacks the field, ask PostgreSQL). A row matches when it is true, as in a WHERE clause.
   */
  test(field: (column: string) => string | undefined): Verdict;
}

export const EVERY_ROW: RowEvaluator = { columns: [], inMemory: true, test: () => true };

/** PostgreSQL refuses a LIKE pattern that ends in a lone escape (SQLSTATE 22025): so is it here. */
function loneEscape(pattern: string): string | null {
  let n = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) n++;
  return n % 2 === 1 ? 'a LIKE pattern must not end with a lone escape character (\\); write \\\\ for a backslash.' : null;
}

/** One leaf as the evaluator reads it: `value` the scalar (or `is`'s word), `values` what is cast. */
interface EvaluatedLeaf {
  op: EvaluatedOperator;
  column: string;
  value: string;
  values: string[];
  negate: boolean;
}

function leafOf(f: Filter): EvaluatedLeaf {
  const op = f.op as string;
  if (!isEvaluated(op))
    throw new FilterProblem('operator', `${op}.${f.column}: this operator is not evaluated on a change's row.`, f.column);
  const value = f.value as string | string[];
  const values = Array.isArray(value) ? value : [value];
  return { op, column: f.column, value: Array.isArray(value) ? '' : value, values, negate: f.negate === true };
}

/** The filters of a condition tree, depth first. */
export function leavesOf(conds: Condition[], out: Filter[] = []): Filter[] {
  for (const c of conds) {
    if ('items' in c) leavesOf(c.items, out);
    else out.push(c);
  }
  return out;
}

/**
 * Compiles a filter tree (the conditions of rest's parseQuery, ANDed) on a table: columns
 * exist (else FilterProblem column_not_found), like/ilike patterns hold at most
 * MAX_LIKE_WILDCARDS `%` (pattern), each compared value fits its column (invalid_value, from one
 * cast statement for the whole filter; the database's ILIKE folding is asked with it).
 * @example const f = await compileEvaluator(db, table, parseQuery('eq.status=paid&gt.total=100', { maxRows: 1 }).filters); f.test((c) => fields.get(c))
 */
export async function compileEvaluator(
  db: Queryable,
  table: TableInfo,
  tree: Condition[],
  options: EvaluatorOptions = {},
): Promise<RowEvaluator> {
  if (tree.length === 0) return EVERY_ROW;
  const budget = options.likeBudget ?? LIKE_MEMORY_BUDGET;
  const filters = leavesOf(tree);
  const planned = filters.map((filter) => {
    const f = leafOf(filter);
    const col = table.columns.get(f.column);
    if (!col) throw new FilterProblem('column_not_found', `The table "${table.name}" has no column "${f.column}".`, f.column);
    const wild = f.op === 'like' || f.op === 'ilike' ? (likeWildcardProblem(f.value) ?? loneEscape(f.value)) : null;
    if (wild) throw new FilterProblem('pattern', `${f.op}.${f.column}: ${wild}`, f.column);
    const family = familyOf(col);
    return { filter, f, col, family, memory: decidedInMemory(f.op, family, f.value) };
  });

  // Each compared value cast to its column's type and written back as the JSON a row image holds
  // for it (values of leaves decided by PostgreSQL are cast too: a wrong one is refused now, not
  // at each change). One statement for the whole filter, with the database's ILIKE folding.
  const casts: string[] = [];
  const params: string[] = [];
  const slots = planned.map(({ f, col }) => {
    if (f.op === 'is' || f.op === 'like' || f.op === 'ilike') return [];
    return f.values.map((v) => {
      params.push(v);
      casts.push(`to_jsonb($${params.length}::text::${col.castType})::text`);
      return casts.length - 1;
    });
  });
  let folding: Folding | null = foldings.get(db) ?? null;
  const ilike = !foldings.has(db) && planned.some((p) => p.f.op === 'ilike' && p.memory);
  if (ilike) {
    params.push(FOLD_PROBE);
    casts.push(`lower($${params.length})`);
  }
  let canonical: string[] = [];
  if (casts.length > 0) {
    try {
      const { rows } = await db.query<{ v: string }>(`select json_build_array(${casts.join(', ')})::text as v`, params);
      canonical = JSON.parse(rows[0]?.v ?? '[]') as string[];
    } catch (err) {
      const kind = dbErrorKind(err);
      if (kind === 'invalid_value' || kind === 'nul_in_text')
        throw new FilterProblem('invalid_value', `A value of the filter does not fit its column's type: ${(err as Error).message}`);
      throw err;
    }
    if (ilike) {
      const lowered = canonical.pop();
      folding = lowered === asciiLower(FOLD_PROBE) ? 'ascii' : lowered === unicodeLower(FOLD_PROBE) ? 'unicode' : null;
      foldings.set(db, folding);
    }
  }

  const testOf = (f: EvaluatedLeaf, col: ColumnInfo, family: Family, memory: boolean, i: number): Leaf => {
    if (!memory || (f.op === 'ilike' && folding === null)) return () => ASK;
    const key = (raw: string) => keyOf(family, col.udt, raw);
    // A field whose text is not what PostgreSQL writes for the type (never, short of a bug): ask.
    const safe =
      (test: (raw: string) => Tri): Leaf =>
      (raw) => {
        if (raw === undefined) return ASK;
        try {
          return test(raw);
        } catch (err) {
          if (err instanceof Unreadable || err instanceof SyntaxError) return ASK;
          throw err;
        }
      };
    switch (f.op) {
      // IS is two-valued: never unknown.
      case 'is':
        if (f.value === 'null' || f.value === 'unknown') return safe((raw) => key(raw) === null);
        return safe((raw) => key(raw) === (f.value === 'true'));
      case 'like':
      case 'ilike': {
        const fold = f.op === 'like' ? 'none' : (folding as Folding);
        const pattern = parseLike(fold === 'none' ? f.value : fold === 'ascii' ? asciiLower(f.value) : unicodeLower(f.value));
        return safe((raw) => {
          if (raw === 'null') return null;
          // The JSON text's length bounds the value's: past the budget, PostgreSQL decides.
          if (raw.length * pattern.width > budget) return ASK;
          if (!raw.startsWith('"')) throw new Unreadable();
          return likeMatchChars(pattern, charsOf(raw, fold));
        });
      }
      case 'in': {
        const values = slots[i].map((k) => key(canonical[k]));
        return safe((raw) => {
          const v = key(raw);
          if (v === null) return null;
          let unknown = false;
          for (const x of values) {
            // `x in (…, null)` is unknown when nothing else matches.
            if (x === null) unknown = true;
            else if (compare(family, v, x) === 0) return true;
          }
          return unknown ? null : false;
        });
      }
      default: {
        const want = key(canonical[slots[i][0]]);
        const op = f.op;
        return safe((raw) => {
          const v = key(raw);
          if (v === null || want === null) return null;
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
        });
      }
    }
  };

  const byFilter = new Map<Filter, { column: string; leaf: Leaf }>();
  planned.forEach(({ filter, f, col, family, memory }, i) => {
    const leaf = testOf(f, col, family, memory, i);
    byFilter.set(filter, { column: col.name, leaf: f.negate ? (raw) => not(leaf(raw)) : leaf });
  });
  const node = (c: Condition): Node => {
    if (!('items' in c)) {
      const t = byFilter.get(c) as { column: string; leaf: Leaf };
      return (field) => t.leaf(field(t.column));
    }
    const items = c.items.map(node);
    const all: Node = c.op === 'and' ? (field) => and(items.map((n) => n(field))) : (field) => or(items.map((n) => n(field)));
    return c.negate ? (field) => not(all(field)) : all;
  };
  const root = tree.map(node);
  return {
    columns: [...new Set(planned.map((p) => p.col.name))],
    inMemory: planned.every((p) => p.memory && !(p.f.op === 'ilike' && folding === null)),
    test(field) {
      const v = and(root.map((n) => n(field)));
      // Unknown does not match (a WHERE clause); ask: PostgreSQL decides.
      return v === ASK ? null : v === true;
    },
  };
}
