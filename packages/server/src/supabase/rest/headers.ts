/**
 * PostgREST's request headers: `Prefer` (RFC 7240, its vocabulary), `Accept` (JSON, one object,
 * CSV), `Range` and the profiles. Pure.
 */
import { pgrst } from './errors.js';

export interface PostgrestPrefs {
  /** `return=representation` (else minimal: writes answer without a body, as PostgREST's default). */
  representation: boolean;
  headersOnly: boolean;
  /** `count=exact|planned|estimated`: counted exactly, or the planner's estimate (routes.ts). */
  count: 'exact' | 'planned' | 'estimated' | null;
  resolution: 'merge' | 'ignore' | null;
  missingDefault: boolean;
  singleObject: boolean;
  strict: boolean;
  /** `tx=rollback`: nothing the request writes is kept. */
  rollback: boolean;
  /** `max-affected=n` (with `handling=strict`): more rows changed than n is PGRST124, nothing kept. */
  maxAffected: number | null;
  /** The preferences honoured, for `Preference-Applied`. */
  applied: string[];
}

const KNOWN =
  /^(return=(minimal|headers-only|representation)|count=(exact|planned|estimated)|resolution=(merge|ignore)-duplicates|missing=default|handling=(lenient|strict)|tx=(commit|rollback)|params=single-object|max-affected=[0-9]+|timezone=.+)$/;

/**
 * Reads `Prefer`. `handling=strict` turns an unknown preference into 400 PGRST122.
 * @example parsePostgrestPrefer('return=representation,count=exact').count // 'exact'
 */
export function parsePostgrestPrefer(header: string | string[] | undefined): PostgrestPrefs {
  const prefs: PostgrestPrefs = {
    representation: false,
    headersOnly: false,
    count: null,
    resolution: null,
    missingDefault: false,
    singleObject: false,
    strict: false,
    rollback: false,
    maxAffected: null,
    applied: [],
  };
  if (header === undefined || header === '') return prefs;
  const tokens = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const unknown: string[] = [];
  for (const t of tokens) {
    const [k, v] = t.split('=', 2);
    if (!KNOWN.test(t)) {
      unknown.push(t);
      continue;
    }
    if (k === 'return') {
      prefs.representation = v === 'representation';
      prefs.headersOnly = v === 'headers-only';
      prefs.applied.push(t);
    } else if (k === 'count') {
      prefs.count = v as PostgrestPrefs['count'];
      prefs.applied.push(t);
    } else if (k === 'resolution') {
      prefs.resolution = v === 'merge-duplicates' ? 'merge' : 'ignore';
      prefs.applied.push(t);
    } else if (k === 'missing') {
      prefs.missingDefault = true;
      prefs.applied.push(t);
    } else if (k === 'handling') {
      prefs.strict = v === 'strict';
      prefs.applied.push(t);
    } else if (k === 'max-affected') {
      prefs.maxAffected = Number(v);
    } else if (k === 'tx') {
      prefs.rollback = v === 'rollback';
      prefs.applied.push(t);
    } else if (k === 'params') {
      prefs.singleObject = true;
      prefs.applied.push(t);
    }
  }
  // PostgREST applies max-affected under handling=strict only.
  if (prefs.maxAffected !== null && prefs.strict) prefs.applied.push(`max-affected=${prefs.maxAffected}`);
  else prefs.maxAffected = null;
  if (prefs.strict && unknown.length > 0) {
    throw pgrst(400, 'PGRST122', 'Invalid preferences given with handling=strict', `Invalid preferences: ${unknown.join(', ')}`);
  }
  return prefs;
}

export type Representation = 'json' | 'object' | 'csv';

/**
 * What `Accept` asks for: a JSON array (`application/json`, `*\/*`, none), one object
 * (`application/vnd.pgrst.object+json`), or CSV (`text/csv`); anything else is 406 PGRST107.
 * @example acceptOf('application/vnd.pgrst.object+json;nulls=stripped') // 'object'
 */
export function acceptOf(header: string | undefined): Representation {
  if (header === undefined || header.trim() === '') return 'json';
  for (const raw of header.split(',')) {
    const type = raw.split(';')[0].trim().toLowerCase();
    if (type === 'application/vnd.pgrst.object+json' || type === 'application/vnd.pgrst.object') return 'object';
    if (type === 'text/csv') return 'csv';
    if (type === 'application/json' || type === '*/*' || type === 'application/*' || type === 'application/vnd.pgrst.array+json') {
      return 'json';
    }
  }
  throw pgrst(406, 'PGRST107', `None of these media types are available: ${header}`);
}

/**
 * `Accept: application/vnd.pgrst.object+json;nulls=stripped` (or array+json): keys whose value is
 * null are left out (PostgREST's json_strip_nulls).
 * @example stripsNulls('application/vnd.pgrst.array+json;nulls=stripped') // true
 */
export function stripsNulls(header: string | undefined): boolean {
  return header !== undefined && /;\s*nulls=stripped/i.test(header);
}

/** json_strip_nulls of a JSON text: null-valued keys of every object left out, at any depth. */
export function stripNulls(json: string): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null ? [] : [[k, strip(x)]])));
    }
    return v;
  };
  return JSON.stringify(strip(JSON.parse(json)));
}

/**
 * `Range: 0-9` (items): the offset and limit it asks for, or null. An unsatisfiable range is 416 PGRST103.
 * @example rangeOf('5-9') // { offset: 5, limit: 5 }
 */
export function rangeOf(header: string | undefined): { offset: number; limit: number | null } | null {
  if (header === undefined) return null;
  const m = /^\s*(?:items=)?([0-9]+)-([0-9]*)\s*$/.exec(header);
  if (!m) return null;
  const from = Number(m[1]);
  if (m[2] === '') return { offset: from, limit: null };
  const to = Number(m[2]);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from) {
    throw pgrst(416, 'PGRST103', 'Requested range not satisfiable', 'The lower boundary must be lower than or equal to the upper boundary');
  }
  return { offset: from, limit: to - from + 1 };
}

/**
 * `Accept-Profile` (reads) or `Content-Profile` (writes): one of the schemas the project exposes
 * (`[api] schemas`; the first is the default when the header is absent); another is 406 PGRST106
 * as PostgREST answers.
 * @example checkProfile(undefined, ['public']) // 'public'
 */
export function checkProfile(header: string | string[] | undefined, exposed: readonly string[]): string {
  const value = header === undefined ? '' : (Array.isArray(header) ? header[0] : header).trim();
  if (value === '' && exposed.length > 0) return exposed[0];
  if (exposed.includes(value)) return value;
  throw pgrst(406, 'PGRST106', `The schema must be one of the following: ${exposed.join(', ')}`, null, null);
}

/** A JSON value in jsonb's text form (`{"a": 1, "b": [1, 2]}`), as PostgreSQL prints it. */
function jsonbText(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jsonbText).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${jsonbText(x)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(v);
}

/**
 * JSON rows as CSV the way PostgREST makes it (each row's record text without its parentheses):
 * a header of the first row's keys; null is an empty field, booleans `t`/`f`, and a value is
 * quoted (`"` and `\` doubled) when empty or holding `"`, `\`, `,`, `(`, `)` or white space.
 */
export function toCsv(json: string): string {
  const parsed = JSON.parse(json) as unknown;
  const rows = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
  if (rows.length === 0) return '';
  const keys = Object.keys(rows[0]);
  const cell = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    const s = typeof v === 'boolean' ? (v ? 't' : 'f') : typeof v === 'object' ? jsonbText(v) : String(v);
    return s === '' || /[",\\()\s]/.test(s) ? `"${s.replace(/["\\]/g, '$&$&')}"` : s;
  };
  return [keys.join(','), ...rows.map((r) => keys.map((k) => cell(r[k])).join(','))].join('\n');
}
