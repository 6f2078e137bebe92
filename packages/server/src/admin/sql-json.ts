/**
 * The SQL runner's answer as JSON text, with numbers sent as the REST API sends them (PostgreSQL's
 * own JSON): `bigint` and `numeric` as JSON numbers with every digit (never rounded through a
 * JavaScript number), `NaN`, `Infinity` and `-Infinity` of float and numeric columns as the
 * strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; JSON.stringify would write
 * null). docs/api.md, "Numbers, dates and times".
 */
import type { SqlResult } from '@plinth/shared';
import type { QueryResult } from '../db/index.js';

const INT8 = 20;
const NUMERIC = 1700;
const FLOAT4 = 700;
const FLOAT8 = 701;
/** Array type → element type, for the array columns of the types above. */
const ARRAY_OF: Record<number, number> = { 1016: INT8, 1231: NUMERIC, 1021: FLOAT4, 1022: FLOAT8 };
const NUMBERISH = new Set([INT8, NUMERIC, FLOAT4, FLOAT8]);

/** A JSON number literal (what PostgreSQL writes for a finite numeric). */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * One value of a column of type `typeId` as JSON text.
 * @example encodeValue('9007199254740993', 20) // '9007199254740993' (not 9007199254740992)
 * @example encodeValue(Number.NaN, 701) // '"NaN"'
 */
export function encodeValue(value: unknown, typeId: number): string {
  if (value === null || value === undefined) return 'null';
  const element = ARRAY_OF[typeId];
  if (element !== undefined && Array.isArray(value)) return `[${value.map((v) => encodeValue(v, element)).join(',')}]`;
  if (NUMBERISH.has(typeId)) {
    if (typeof value === 'number') {
      if (Number.isFinite(value)) return JSON.stringify(value);
      return Number.isNaN(value) ? '"NaN"' : value > 0 ? '"Infinity"' : '"-Infinity"';
    }
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'string') {
      const text = value.trim();
      if (JSON_NUMBER.test(text)) return text;
      return JSON.stringify(text);
    }
  }
  return JSON.stringify(value) ?? 'null';
}

/** A result row as a JSON object, each value encoded by its column's type. */
function encodeRow(row: Record<string, unknown>, types: Map<string, number>): string {
  let out = '{';
  let first = true;
  for (const [name, value] of Object.entries(row)) {
    out += `${first ? '' : ','}${JSON.stringify(name)}:${encodeValue(value, types.get(name) ?? 0)}`;
    first = false;
  }
  return `${out}}`;
}

/** One result of the runner's answer (shared's `SqlResult`). */
export type RunnerResult = SqlResult;

/**
 * The runner's whole answer, `{results: [...], durationMs}`, as JSON text.
 * @example encodeRunnerAnswer(results, fieldsOf, 3)
 */
export function encodeRunnerAnswer(results: RunnerResult[], fields: QueryResult['fields'][], durationMs: number): string {
  const parts = results.map((r, i) => {
    const types = new Map<string, number>();
    for (const f of fields[i] ?? []) if (!types.has(f.name)) types.set(f.name, f.dataTypeID);
    return (
      `{"command":${JSON.stringify(r.command)},"rowCount":${r.rowCount},"columns":${JSON.stringify(r.columns)},` +
      `"rows":[${r.rows.map((row) => encodeRow(row, types)).join(',')}],"truncated":${r.truncated}}`
    );
  });
  return `{"results":[${parts.join(',')}],"durationMs":${durationMs}}`;
}
