/**
 * URL-state schemas: what each page keeps in its query string, validated (so a hand-edited or
 * stale bookmark never breaks a page) and typed for TanStack Router's `validateSearch`.
 * Unknown or malformed values fall back to the default; nothing secret ever goes here.
 */

import { FILTER_OPERATORS } from '@plinth/shared';
import type { FilterRow, OrderRow } from './rest';

type Raw = Record<string, unknown>;

const str = (v: unknown, max = 500): string | undefined =>
  typeof v === 'string' && v.length <= max ? v : typeof v === 'number' ? String(v) : undefined;
const oneOf = <T extends string>(v: unknown, options: readonly T[]): T | undefined => (options.includes(v as T) ? (v as T) : undefined);
const int = (v: unknown, min: number, max: number): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
};

/** A console path to come back to after login: same-origin paths only (never `//evil`). */
export function safeNext(v: unknown): string | undefined {
  const s = str(v, 2000);
  return s?.startsWith('/') && !s.startsWith('//') && !s.includes('\\') ? s : undefined;
}

export interface LoginSearch {
  next?: string;
}
export const loginSearch = (raw: Raw): LoginSearch => ({ next: safeNext(raw.next) });

export interface SetupSearch {
  token?: string;
}
export const setupSearch = (raw: Raw): SetupSearch => ({ token: str(raw.token, 256) });

export interface InviteSearch {
  token?: string;
}
export const inviteSearch = (raw: Raw): InviteSearch => ({ token: str(raw.token, 256) });

/** `/console/audit?page=`: the page of the audit log (newest first). */
export interface AuditSearch {
  page?: number;
}
export const auditSearch = (raw: Raw): AuditSearch => ({ page: int(raw.page, 1, 1_000_000) });

export interface UsersSearch {
  q?: string;
  page?: number;
  user?: string;
}
export const usersSearch = (raw: Raw): UsersSearch => ({
  q: str(raw.q, 320) || undefined,
  page: int(raw.page, 1, 1_000_000),
  user: str(raw.user, 64),
});

export const MESSAGE_VIEWS = ['inbox', 'log'] as const;
export interface MessagesSearch {
  view?: (typeof MESSAGE_VIEWS)[number];
  to?: string;
  status?: 'queued' | 'sent' | 'failed';
  channel?: 'email' | 'sms';
  msg?: string;
}
export const messagesSearch = (raw: Raw): MessagesSearch => ({
  view: oneOf(raw.view, MESSAGE_VIEWS),
  to: str(raw.to, 320) || undefined,
  status: oneOf(raw.status, ['queued', 'sent', 'failed'] as const),
  channel: oneOf(raw.channel, ['email', 'sms'] as const),
  msg: str(raw.msg, 40),
});

export interface WebhooksSearch {
  /** The webhook shown. */
  hook?: string;
  status?: 'queued' | 'sent' | 'failed';
  page?: number;
  /** The delivery whose body and answer are open. */
  delivery?: string;
}
export const webhooksSearch = (raw: Raw): WebhooksSearch => ({
  hook: str(raw.hook, 64),
  status: oneOf(raw.status, ['queued', 'sent', 'failed'] as const),
  page: int(raw.page, 1, 1_000_000),
  delivery: str(raw.delivery, 24),
});

export const AUTH_SECTIONS = ['methods', 'security', 'urls', 'providers', 'oidc', 'templates', 'delivery'] as const;
export interface AuthSearch {
  section?: (typeof AUTH_SECTIONS)[number];
}
export const authSearch = (raw: Raw): AuthSearch => ({ section: oneOf(raw.section, AUTH_SECTIONS) });

/**
 * `/console/auth/oidc-test?provider=&test=`: the result page of a test sign-in, where the
 * server's callback sends the browser (docs/api.md). The test id is no secret: reading the
 * result needs the admin session.
 */
export interface OidcTestSearch {
  provider?: string;
  test?: string;
}
export const oidcTestSearch = (raw: Raw): OidcTestSearch => ({
  provider: str(raw.provider, 32) || undefined,
  test: str(raw.test, 64) || undefined,
});

// ---- the API explorer and the table browser (part 2) ----

const bool = (v: unknown): true | undefined => (v === true || v === 'true' ? true : undefined);

/** Filter rows `[op, column, value]`: at most 20, operators from the closed list, values ≤ 2000 characters. */
function filterRows(v: unknown): FilterRow[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const rows: FilterRow[] = [];
  for (const r of v.slice(0, 20)) {
    if (!Array.isArray(r) || r.length !== 3) continue;
    const op = oneOf(r[0], FILTER_OPERATORS);
    const column = str(r[1], 256);
    const value = str(r[2], 2000);
    if (op && column !== undefined && value !== undefined) rows.push([op, column, value]);
  }
  return rows.length ? rows : undefined;
}

/** Order rows `[column, asc|desc, first|last?]`: at most 10. */
function orderRows(v: unknown): OrderRow[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const rows: OrderRow[] = [];
  for (const r of v.slice(0, 10)) {
    if (!Array.isArray(r) || r.length < 2) continue;
    const column = str(r[0], 256);
    const dir = oneOf(r[1], ['asc', 'desc'] as const);
    const nulls = oneOf(r[2], ['first', 'last'] as const);
    if (column !== undefined && dir) rows.push(nulls ? [column, dir, nulls] : [column, dir]);
  }
  return rows.length ? rows : undefined;
}

export const TABLE_OPS = ['list', 'get', 'create', 'update', 'delete'] as const;
export const CALLERS = ['anon', 'user', 'secret'] as const;
export type Caller = (typeof CALLERS)[number];

/**
 * `/console/api[/{table}]`: the request being built, so it can be bookmarked, shared and
 * restored by a reload. Never a key, a token or a password: the caller is only named.
 */
export interface ApiSearch {
  /** Table operation (on `/console/api/{table}`). */
  op?: (typeof TABLE_OPS)[number];
  /** Update or delete one row by its primary key instead of by filters. */
  by?: 'pk';
  pk?: string;
  f?: FilterRow[];
  order?: OrderRow[];
  select?: string;
  limit?: number;
  offset?: number;
  count?: true;
  minimal?: true;
  /** The JSON body's text, as typed. */
  body?: string;
  as?: Caller;
  /** Another endpoint (on `/console/api`): `"POST /v1/auth/signup"`. */
  endpoint?: string;
  /** A function (on `/console/api`): `/api/v1/rpc/{fn}`, its overload `ov`, called with GET (`get`); its fields in `body`. */
  fn?: string;
  ov?: number;
  get?: true;
}
export const apiSearch = (raw: Raw): ApiSearch => ({
  op: oneOf(raw.op, TABLE_OPS),
  by: oneOf(raw.by, ['pk'] as const),
  pk: str(raw.pk, 500),
  f: filterRows(raw.f),
  order: orderRows(raw.order),
  select: str(raw.select, 2000) || undefined,
  limit: int(raw.limit, 0, 1_000_000_000),
  offset: int(raw.offset, 0, 1_000_000_000),
  count: bool(raw.count),
  minimal: bool(raw.minimal),
  body: str(raw.body, 20_000),
  as: oneOf(raw.as, CALLERS),
  endpoint: str(raw.endpoint, 300),
  fn: str(raw.fn, 300),
  ov: int(raw.ov, 0, 100),
  get: bool(raw.get),
});

export const PAGE_SIZES = [25, 50, 100, 500, 1000] as const;
export const DATA_VIEWS = ['rows', 'structure', 'policies', 'realtime'] as const;
/** `/console/data/{table}`: the view (rows, the table editor, the policy editor), server-side filters, order and page. */
export interface DataSearch {
  view?: (typeof DATA_VIEWS)[number];
  f?: FilterRow[];
  order?: OrderRow[];
  page?: number;
  size?: (typeof PAGE_SIZES)[number];
}
export const dataSearch = (raw: Raw): DataSearch => ({
  view: oneOf(raw.view, DATA_VIEWS),
  f: filterRows(raw.f),
  order: orderRows(raw.order),
  page: int(raw.page, 1, 10_000_000),
  size: PAGE_SIZES.find((s) => s === int(raw.size, 1, 1000)),
});
/** `/console/data`: the list of tables, or the new-table form (`create`). */
export interface DataIndexSearch {
  create?: true;
}
export const dataIndexSearch = (raw: Raw): DataIndexSearch => ({ create: bool(raw.create) });

/**
 * `/console/storage/{bucket}`: the folder shown (`a/b`, no leading or trailing `/`), the search
 * within it, and the object whose details are open (its full name).
 */
export interface StorageSearch {
  prefix?: string;
  q?: string;
  object?: string;
  /** The bucket's policies are shown (the policy editor for storage.objects). */
  policies?: true;
}
export const storageSearch = (raw: Raw): StorageSearch => ({
  policies: bool(raw.policies),
  prefix: str(raw.prefix, 1024)?.replace(/^\/+|\/+$/g, '') || undefined,
  q: str(raw.q, 255) || undefined,
  object: str(raw.object, 1024) || undefined,
});
