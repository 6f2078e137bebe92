/**
 * The rules of a webhook's fields (docs/webhooks.md "Managing webhooks"), checked all at once so a
 * refused save names every problem: 400 `invalid_webhook` with `details: [{field, message}]`, and
 * nothing is saved. The URL's address is checked last, and only when the rest is right (it may
 * take a DNS lookup): 400 `webhook_url_refused` for a private address.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { MASK, WEBHOOK_EVENTS, type WebhookEvent } from '@plinth/shared';
import type { Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import type { SchemaCache } from '../rest/index.js';
import { checkHost, type LookupFunction, RefusedAddressError } from './address.js';
import { compileFilter, FilterError } from './filter.js';

/** `function:<name>`: the delivery goes to a function of the project (functions/<name>.ts), not over HTTP. */
export const FUNCTION_TARGET = /^function:([A-Za-z0-9_-]{1,64})$/;

export interface WebhookFields {
  name: string;
  table: string;
  events: WebhookEvent[];
  url: string;
  filter: string | null;
  headers: Record<string, string>;
  enabled: boolean;
}

export interface Problem {
  field: string;
  message: string;
}

const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 4096;
const MAX_FILTER = 2000;
/**
 * Headers Plinth sets itself, or that would change how the request is framed or routed: a
 * receiver must be able to trust Plinth-Signature and Plinth-Delivery, and Host or
 * Content-Length from a project would make the request something else.
 */
const RESERVED_HEADER =
  /^(host|content-length|content-type|transfer-encoding|connection|keep-alive|upgrade|te|trailer|expect|proxy-.*|user-agent|plinth-.*)$/i;

const isText = (v: unknown): v is string => typeof v === 'string';
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks `input` over `base` (the stored webhook for a PATCH, else the defaults), returning the
 * merged fields or throwing `invalid_webhook`. A header value sent as `MASK` keeps the stored one.
 * @example const fields = await checkFields({ db, schema, allowPrivate: false }, body, null);
 */
export async function checkFields(
  deps: {
    db: Queryable;
    schema: SchemaCache;
    allowPrivate: boolean;
    lookup?: LookupFunction;
    /** Whether the project has a function of that name (a `function:<name>` target); absent: none is accepted. */
    hasFunction?: (name: string) => boolean;
  },
  input: Record<string, unknown>,
  base: WebhookFields | null,
): Promise<WebhookFields> {
  const problems: Problem[] = [];
  const bad = (field: string, message: string) => problems.push({ field, message });
  const has = (k: string) => Object.hasOwn(input, k) && input[k] !== undefined;
  for (const k of Object.keys(input)) {
    if (!['name', 'table', 'events', 'url', 'filter', 'headers', 'enabled'].includes(k)) bad(k, 'is not a field of a webhook');
  }
  if (!base) for (const k of ['name', 'table', 'url']) if (!has(k)) bad(k, 'is required');

  const out: WebhookFields = base
    ? { ...base, headers: { ...base.headers } }
    : { name: '', table: '', events: [...WEBHOOK_EVENTS], url: '', filter: null, headers: {}, enabled: true };

  if (has('name')) {
    const v = input.name;
    if (!isText(v) || v.trim().length < 1 || v.trim().length > 100 || CONTROL.test(v)) {
      bad('name', 'must be text of 1 to 100 characters, without control characters');
    } else out.name = v.trim();
  }
  if (has('table')) {
    const v = input.table;
    if (!isText(v) || v.length < 1 || v.length > 63) bad('table', 'must be the name of a table of the public schema');
    else out.table = v;
  }
  if (has('events')) {
    const v = input.events;
    if (
      !Array.isArray(v) ||
      v.length === 0 ||
      !v.every((e) => (WEBHOOK_EVENTS as readonly unknown[]).includes(e)) ||
      new Set(v).size !== v.length
    ) {
      bad('events', `must be a non-empty list of distinct events among ${WEBHOOK_EVENTS.join(', ')}`);
    } else out.events = WEBHOOK_EVENTS.filter((e) => v.includes(e));
  }
  let url: URL | null = null;
  if (has('url')) {
    const v = input.url;
    const fn = isText(v) ? FUNCTION_TARGET.exec(v) : null;
    if (fn) {
      // A function of the project (docs/webhooks.md, "A function as the target"): no HTTP, no address to check.
      if (!deps.hasFunction) bad('url', 'names a function, but this project has no functions folder');
      else if (!deps.hasFunction(fn[1])) bad('url', `names no function of this project (write functions/${fn[1]}.ts)`);
      else out.url = v as string;
    } else if (!isText(v) || v.length > 2048) bad('url', 'must be an http(s) URL of at most 2048 characters, or function:<name>');
    else {
      try {
        url = new URL(v);
      } catch {
        bad('url', 'is not a URL (https://…)');
      }
      if (url) {
        if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('url', 'must start with https:// or http://');
        else if (url.username || url.password) bad('url', 'must not contain user:password@; send a credential in a header');
        else if (url.hash) bad('url', 'must not have a fragment (#…)');
        else if (!url.hostname) bad('url', 'has no host');
        else out.url = url.toString();
      }
    }
  }
  if (has('filter')) {
    const v = input.filter;
    if (v === null || v === '') out.filter = null;
    else if (!isText(v) || v.length > MAX_FILTER) bad('filter', `must be null or REST filters of at most ${MAX_FILTER} characters`);
    else out.filter = v;
  }
  if (has('headers')) {
    const v = input.headers;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('headers', 'must be an object of header names to values');
    else {
      const entries = Object.entries(v);
      const next: Record<string, string> = {};
      const seen = new Set<string>();
      if (entries.length > MAX_HEADERS) bad('headers', `takes at most ${MAX_HEADERS} headers`);
      for (const [name, value] of entries) {
        const field = `headers.${name.slice(0, 100)}`;
        try {
          validateHeaderName(name);
        } catch {
          bad(field, 'is not a valid header name');
          continue;
        }
        if (name.length > 100) bad(field, 'is longer than 100 characters');
        else if (RESERVED_HEADER.test(name)) bad(field, 'is set by Plinth (or frames the request) and cannot be given');
        else if (seen.has(name.toLowerCase())) bad(field, 'is given twice (header names are case-insensitive)');
        else if (!isText(value) || value.length > MAX_HEADER_VALUE) bad(field, `must be text of at most ${MAX_HEADER_VALUE} characters`);
        else if (value === MASK) {
          const kept = Object.entries(base?.headers ?? {}).find(([n]) => n.toLowerCase() === name.toLowerCase());
          if (kept) next[name] = kept[1];
          else bad(field, `"${MASK}" keeps a stored value; this header has none: send its value`);
        } else {
          try {
            validateHeaderValue(name, value);
            next[name] = value;
          } catch {
            bad(field, 'has characters a header value cannot carry (line breaks, control characters)');
          }
        }
        seen.add(name.toLowerCase());
      }
      out.headers = next;
    }
  }
  if (has('enabled')) {
    if (typeof input.enabled !== 'boolean') bad('enabled', 'must be true or false');
    else out.enabled = input.enabled;
  }

  // The table and the filter, against the schema cache (and PostgreSQL for the filter's values).
  // A miss reloads the cache once: a table made a moment ago through another instance (or psql)
  // may not have reached this one's cache yet.
  if (!problems.some((p) => p.field === 'table') && (has('table') || has('filter'))) {
    let reloaded = false;
    const tableNamed = async () => {
      const hit = deps.schema.get().tables.get(out.table);
      if (hit || reloaded) return hit;
      reloaded = true;
      return (await deps.schema.reload()).tables.get(out.table);
    };
    let table = await tableNamed();
    if (table?.kind !== 'table') bad('table', `There is no table "${out.table}" in the public schema.`);
    else if (table.pk.length === 0)
      bad('table', `The table "${out.table}" has no primary key: a change names its row by it. Add one first.`);
    else if (!problems.some((p) => p.field === 'filter')) {
      for (;;) {
        try {
          await compileFilter(deps.db, table, out.filter);
          break;
        } catch (err) {
          if (!(err instanceof FilterError)) throw err;
          if (reloaded) {
            bad('filter', err.message);
            break;
          }
          reloaded = true;
          table = (await deps.schema.reload()).tables.get(out.table) ?? table;
        }
      }
    }
  }
  if (problems.length > 0) {
    throw new ApiError('invalid_webhook', `The webhook is invalid: ${problems[0].field} ${problems[0].message}.`, problems);
  }
  if (url && !deps.allowPrivate) await checkUrlAddress(url, deps.lookup);
  return out;
}

/** The save-time address check of a URL: 400 webhook_url_refused, or invalid_webhook when the host does not resolve. */
async function checkUrlAddress(url: URL, lookup?: LookupFunction): Promise<void> {
  try {
    await checkHost(url.hostname, lookup);
  } catch (err) {
    if (err instanceof RefusedAddressError) {
      throw new ApiError('webhook_url_refused', `The URL is refused: ${err.message}.`, { field: 'url', address: err.address });
    }
    const code = (err as { code?: string }).code ?? 'no answer';
    throw new ApiError('invalid_webhook', `The webhook is invalid: url's host ${url.hostname} could not be resolved (${code}).`, [
      { field: 'url', message: `host ${url.hostname} could not be resolved (${code})` },
    ]);
  }
}
