import { type HttpRequest, normalizeUrl, send } from '@plinth/sdk';

/**
 * The console's API client: every call goes through the SDK's `send` (one error shape, network
 * failures as `network_error`), to the server that served the page, with the admin cookie and
 * the `X-Plinth-Admin: 1` header the CSRF rule asks for. No key is ever sent or stored here.
 */

/** Where the console is mounted (`…/console/`), from the <base href> the server writes. */
export const consoleBase = new URL('./', document.baseURI);
/** The server's base URL (the console's parent), e.g. `http://localhost:8080`. */
export const serverUrl = normalizeUrl(new URL('../', consoleBase).href);
/** The router's basepath, e.g. `/console` (or `/prefix/console` behind a proxy). */
export const basepath = consoleBase.pathname.replace(/\/$/, '');

const http = { url: serverUrl, publicKey: '', headers: { 'x-plinth-admin': '1' } };

/** A failed call, thrown so TanStack Query sees it: the server's code, message and details. */
export class ApiFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
  /** The API could not be reached at all (server down, network gone). */
  get unreachable(): boolean {
    return this.status === 0;
  }
}

/** Calls the API; resolves with the body, or throws ApiFailure. */
export async function call<T>(req: HttpRequest): Promise<T> {
  const res = await send<T>(http, req);
  if (res.error) {
    const e = res.error as { code: string; message: string; status: number; details?: unknown };
    if (res.status === 401 && !req.path.startsWith('/api/v1/admin/login')) signedOut();
    throw new ApiFailure(e.code, e.message, res.status, e.details);
  }
  return res.data as T;
}

/** Like `call`, also returning the response headers (Content-Range). */
export async function callWithHeaders<T>(req: HttpRequest): Promise<{ data: T; headers: Headers }> {
  const res = await send<T>(http, req);
  if (res.error) {
    const e = res.error as { code: string; message: string; status: number; details?: unknown };
    if (res.status === 401) signedOut();
    throw new ApiFailure(e.code, e.message, res.status, e.details);
  }
  return { data: res.data as T, headers: res.headers };
}

let signedOutHandler: () => void = () => undefined;
/** Tells the console the server said the session is gone (a 401 outside `call`, e.g. an upload). */
export function signedOut() {
  signedOutHandler();
}
/** What to do when the server says the session is gone (main.tsx: go to login, then back). */
export function whenSignedOut(handler: () => void) {
  signedOutHandler = handler;
}

// ---- the wire types the console reads (docs/api.md §4) ----

import type {
  Admin,
  AdminInvite,
  AdminRole,
  AuditEntry,
  AuthSettings,
  BackupInfo,
  DevMessage,
  EndUser,
  EndUserDetail,
  EndUserFactors,
  LogEntry,
  OidcTestResult,
  ProjectSettings as Project,
  SavedQuery,
  SigningKeyRotation,
  SqlResult,
  TemplateKind,
  Webhook,
  WebhookCreated,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookInput,
} from '@plinth/shared';

export type {
  AppleProviderSettings as AppleProvider,
  AuthSettings,
  OAuthProviderSettings as OAuthProvider,
  OidcProviderSettings as OidcProvider,
  OidcTestResult,
  TemplateKind,
} from '@plinth/shared';
/** The mask the server sends in place of a stored secret. */
export { MASK } from '@plinth/shared';

export type {
  Admin,
  AdminInvite,
  AdminRole,
  AuditEntry,
  BackupInfo,
  DevMessage,
  EndUser,
  EndUserDetail,
  LogEntry,
  ProjectSettings as Project,
  SavedQuery,
  SigningKeyRotation,
  SqlResult,
} from '@plinth/shared';
export type { Webhook, WebhookCreated, WebhookDelivery, WebhookDeliveryDetail, WebhookEvent, WebhookInput } from '@plinth/shared';

/** A column as PostgreSQL has it: `type` is the short name the SQL runner shows (`int8`, `text[]`). */
export interface PgColumn {
  name: string;
  type: string;
  nullable: boolean;
  has_default: boolean;
  /** The default as SQL (`auth.uid()`, `now()`), or null. */
  default_expr: string | null;
  pk: boolean;
}

// Bound parameter, never spliced: the table name comes from the URL.
const COLUMNS_SQL = `select a.attname as name,
  case when t.typcategory = 'A' then e.typname || '[]' else t.typname end as type,
  not a.attnotnull as nullable,
  (a.atthasdef or a.attidentity <> '' or a.attgenerated <> '') as has_default,
  pg_get_expr(d.adbin, d.adrelid) as default_expr,
  coalesce(a.attnum = any(i.indkey::int2[]), false) as pk
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
join pg_type t on t.oid = a.atttypid
left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
left join pg_index i on i.indrelid = c.oid and i.indisprimary
left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
where c.relname = $1 and a.attnum > 0 and not a.attisdropped
order by a.attnum`;

/** The path that downloads a backup (fetched with `fetchBlob`: the cookie's GETs need the header too). */
export const backupPath = (name: string) => `/api/v1/backups/${encodeURIComponent(name)}`;

/**
 * The bytes at `path` (`/api/v1/…`, with its query), fetched with the admin cookie and the
 * `X-Plinth-Admin: 1` header: the server refuses a cookie GET without it (docs/security.md), so
 * the console never points `<img src>` or `<a href>` at an API URL; it shows and saves blob URLs
 * of what it fetched. Throws ApiFailure with the server's code.
 */
export async function fetchBlob(path: string, signal?: AbortSignal): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(`${serverUrl}${path}`, { headers: { 'x-plinth-admin': '1' }, credentials: 'same-origin', signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiFailure('network_error', String(err), 0);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { code?: string; message?: string; details?: unknown } | null;
    if (res.status === 401) signedOut();
    throw new ApiFailure(body?.code ?? 'http_error', body?.message ?? `GET answered ${res.status}.`, res.status, body?.details);
  }
  return res.blob();
}

/** Saves a blob as a file named `filename` (a click on a blob URL's download link, revoked after). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has its own copy once started; a minute is far more than it needs to begin.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---- calls ----

const q = (params: Record<string, string | number | undefined>) =>
  new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== '') as Array<[string, string]>,
  ).toString();

export const api = {
  me: () => call<{ admin: Admin }>({ path: '/api/v1/admin/me' }),
  login: (email: string, password: string) =>
    call<{ admin: Admin }>({ method: 'POST', path: '/api/v1/admin/login', body: { email, password } }),
  setup: (token: string, email: string, password: string) =>
    call<{ admin: Admin }>({ method: 'POST', path: '/api/v1/admin/setup', body: { token, email, password } }),
  /** Whether a setup link would still make the first admin (asking does not use it). */
  setupCheck: (token: string) => call<{ usable: boolean }>({ method: 'POST', path: '/api/v1/admin/setup/check', body: { token } }),
  logout: () => call<null>({ method: 'POST', path: '/api/v1/admin/logout' }),
  // ---- the team, the audit log, signing keys (§4.1) ----
  admins: () => call<Admin[]>({ path: '/api/v1/admin/admins' }),
  setAdminRole: (id: string, role: AdminRole) =>
    call<Admin>({ method: 'PATCH', path: `/api/v1/admin/admins/${encodeURIComponent(id)}`, body: { role } }),
  removeAdmin: (id: string) => call<Admin>({ method: 'DELETE', path: `/api/v1/admin/admins/${encodeURIComponent(id)}` }),
  invites: () => call<AdminInvite[]>({ path: '/api/v1/admin/invites' }),
  invite: (email: string, role: AdminRole) => call<AdminInvite>({ method: 'POST', path: '/api/v1/admin/invites', body: { email, role } }),
  revokeInvite: (id: string) => call<AdminInvite>({ method: 'DELETE', path: `/api/v1/admin/invites/${encodeURIComponent(id)}` }),
  acceptInvite: (token: string, password: string) =>
    call<{ admin: Admin }>({ method: 'POST', path: '/api/v1/admin/invites/accept', body: { token, password } }),
  async audit(limit: number, offset: number) {
    const { data, headers } = await callWithHeaders<AuditEntry[]>({ path: '/api/v1/admin/audit', query: q({ limit, offset }) });
    return { entries: data, total: Number(headers.get('content-range')?.split('/')[1] ?? data.length) };
  },
  // ---- backups of the embedded project (docs/operations.md "Backups") ----
  backups: () => call<BackupInfo[]>({ path: '/api/v1/backups' }),
  makeBackup: () => call<BackupInfo & { storage: unknown }>({ method: 'POST', path: '/api/v1/backups' }),
  // ---- realtime capture per table (docs/realtime.md "Which tables") ----
  realtimeTables: () => call<Array<{ table: string; enabled: boolean }>>({ path: '/api/v1/realtime/tables' }),
  /** Turns capture on (`PUT`: the SDK's `send` has no PUT, so fetch, with the cookie and header `call` sends) or off. */
  async setRealtime(table: string, on: boolean): Promise<{ table: string; enabled: boolean }> {
    const path = `/api/v1/realtime/tables/${encodeURIComponent(table)}`;
    if (!on) return call({ method: 'DELETE', path });
    let res: Response;
    try {
      res = await fetch(`${serverUrl}${path}`, { method: 'PUT', headers: { 'x-plinth-admin': '1' }, credentials: 'same-origin' });
    } catch (err) {
      throw new ApiFailure('network_error', String(err), 0);
    }
    const body = (await res.json().catch(() => null)) as { code?: string; message?: string; details?: unknown } | null;
    if (res.status === 401) signedOut();
    if (!res.ok)
      throw new ApiFailure(body?.code ?? 'internal_error', body?.message ?? `PUT answered ${res.status}.`, res.status, body?.details);
    return body as { table: string; enabled: boolean };
  },
  rotateSigningKey: (revoke: boolean) =>
    call<SigningKeyRotation>({ method: 'POST', path: '/api/v1/admin/signing-keys/rotate', body: { revoke } }),
  /**
   * The project keys: kept in TanStack Query's memory cache only, never in storage or URLs.
   * `secret_key` is null for a role that may not have it (developer, viewer).
   */
  keys: () => call<{ public_key: string; secret_key: string | null }>({ path: '/api/v1/admin/keys' }),
  project: () => call<Project>({ path: '/api/v1/project' }),
  sql: (query: string, params?: Array<string | number | boolean | null>) =>
    call<{ results: SqlResult[]; durationMs: number }>({
      method: 'POST',
      path: '/api/v1/sql',
      body: params ? { query, params } : { query },
    }),
  savedQueries: () => call<SavedQuery[]>({ path: '/api/v1/sql/saved' }),
  saveQuery: (name: string, query: string) => call<SavedQuery>({ method: 'POST', path: '/api/v1/sql/saved', body: { name, query } }),
  updateSavedQuery: (id: string, patch: { name?: string; query?: string }) =>
    call<SavedQuery>({ method: 'PATCH', path: `/api/v1/sql/saved/${encodeURIComponent(id)}`, body: patch }),
  deleteSavedQuery: (id: string) => call<null>({ method: 'DELETE', path: `/api/v1/sql/saved/${encodeURIComponent(id)}` }),
  /** `GET /metrics` as Prometheus text (not JSON, so not through `send`); the admin cookie as for every call. */
  async metrics(): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${serverUrl}/metrics`, { headers: { 'x-plinth-admin': '1' }, credentials: 'same-origin' });
    } catch (err) {
      throw new ApiFailure('network_error', String(err), 0);
    }
    if (res.status === 401) signedOut();
    if (!res.ok) throw new ApiFailure('metrics_unavailable', `GET /metrics answered ${res.status}.`, res.status);
    return res.text();
  },
  /** The OpenAPI document of the project (it asks for a key: the public one will do). */
  async openapi(publicKey: string): Promise<unknown> {
    // With a key, not the admin cookie: a 401 here is about the key, not the admin's session.
    const res = await send<unknown>({ url: serverUrl, publicKey }, { path: '/api/v1/openapi.json' });
    if (res.error) throw new ApiFailure(res.error.code, res.error.message, res.status, res.error.details);
    return res.data;
  },
  /** The PostgreSQL types and primary key of a public table's columns (the OpenAPI document has JSON types only). */
  async tableColumns(table: string): Promise<PgColumn[]> {
    const res = await api.sql(COLUMNS_SQL, [table]);
    return res.results[0].rows as unknown as PgColumn[];
  },
  settings: () => call<AuthSettings>({ path: '/api/v1/settings/auth' }),
  /**
   * Saves the settings. What GET adds that is no setting (`managed`, `managed_by`) is left out, and
   * so are the keys plinth.json manages (`managed`: `min_password_length`, `providers.github`):
   * the server refuses a PATCH naming one, and the page refuses a change of one before saving.
   */
  saveSettings: (patch: Partial<AuthSettings> | Record<string, unknown>) => {
    const { managed = [], managed_by: _managedBy, ...body } = patch as Record<string, unknown> & { managed?: string[] };
    for (const key of managed) {
      const [top, sub] = key.split('.');
      if (sub === undefined) delete body[top];
      else if (body[top] && typeof body[top] === 'object') {
        const { [sub]: _managed, ...rest } = body[top] as Record<string, unknown>;
        body[top] = rest;
      }
    }
    return call<AuthSettings>({ method: 'PATCH', path: '/api/v1/settings/auth', body });
  },
  /** Starts a test sign-in of a saved `oidc_providers` entry: the provider's URL to open, and the test's id. */
  startOidcTest: (id: string) =>
    call<{ url: string; test_id: string; result_url: string; expires_in: number }>({
      method: 'POST',
      path: `/api/v1/settings/auth/oidc/${encodeURIComponent(id)}/test`,
    }),
  /** What the provider sent in a test sign-in (pending until its callback ran; kept one hour). */
  oidcTestResult: (id: string, testId: string) =>
    call<OidcTestResult>({ path: `/api/v1/settings/auth/oidc/${encodeURIComponent(id)}/tests/${encodeURIComponent(testId)}` }),
  previewEmail: (kind: TemplateKind, template: { subject?: string; html?: string; text?: string }) =>
    call<{ subject: string; html: string; text: string }>({ method: 'POST', path: '/api/v1/email/preview', body: { kind, template } }),
  /** The built-in email templates by kind, as written (`{{link}}` and all): what an override starts from. */
  templateDefaults: () =>
    call<Record<TemplateKind, { subject: string; html: string; text: string }>>({ path: '/api/v1/email/templates/defaults' }),
  testEmail: (to: string) =>
    call<{ sent: true; to: string; transport: string; response: string }>({ method: 'POST', path: '/api/v1/email/test', body: { to } }),
  async users(search: string, limit: number, offset: number) {
    const { data, headers } = await callWithHeaders<EndUser[]>({ path: '/api/v1/users', query: q({ search, limit, offset }) });
    const total = Number(headers.get('content-range')?.split('/')[1] ?? data.length);
    return { users: data, total };
  },
  user: (id: string) => call<EndUserDetail>({ path: `/api/v1/users/${encodeURIComponent(id)}` }),
  createUser: (body: { email?: string; phone?: string; password?: string; email_confirmed?: boolean }) =>
    call<EndUser>({ method: 'POST', path: '/api/v1/users', body }),
  updateUser: (id: string, body: Record<string, unknown>) =>
    call<EndUser>({ method: 'PATCH', path: `/api/v1/users/${encodeURIComponent(id)}`, body }),
  deleteUser: (id: string) => call<EndUser>({ method: 'DELETE', path: `/api/v1/users/${encodeURIComponent(id)}` }),
  signOutUser: (id: string) => call<{ revoked: number }>({ method: 'POST', path: `/api/v1/users/${encodeURIComponent(id)}/signout` }),
  userFactors: (id: string) => call<EndUserFactors>({ path: `/api/v1/users/${encodeURIComponent(id)}/factors` }),
  resetFactors: (id: string) => call<{ removed: number }>({ method: 'DELETE', path: `/api/v1/users/${encodeURIComponent(id)}/factors` }),
  removeUserPasskey: (id: string, passkey: string) =>
    call<{ id: string }>({ method: 'DELETE', path: `/api/v1/users/${encodeURIComponent(id)}/passkeys/${encodeURIComponent(passkey)}` }),
  resendVerification: (id: string) =>
    call<{ sent: true; to: string }>({ method: 'POST', path: `/api/v1/users/${encodeURIComponent(id)}/resend-verification` }),
  messages: (f: { to?: string; status?: string; channel?: string }) =>
    call<LogEntry[]>({ path: '/api/v1/messages', query: q({ ...f, limit: 200 }) }),
  inbox: (f: { to?: string; channel?: string }) => call<DevMessage[]>({ path: '/api/v1/dev/inbox', query: q({ ...f, limit: 200 }) }),
  /** Plain tables of `public` (what a webhook or realtime can watch). */
  tables: () => call<Array<{ table: string; enabled: boolean }>>({ path: '/api/v1/realtime/tables' }),
  webhooks: () => call<Webhook[]>({ path: '/api/v1/webhooks' }),
  createWebhook: (body: WebhookInput) => call<WebhookCreated>({ method: 'POST', path: '/api/v1/webhooks', body }),
  updateWebhook: (id: string, body: Partial<WebhookInput>) =>
    call<Webhook>({ method: 'PATCH', path: `/api/v1/webhooks/${encodeURIComponent(id)}`, body }),
  deleteWebhook: (id: string) => call<null>({ method: 'DELETE', path: `/api/v1/webhooks/${encodeURIComponent(id)}` }),
  rotateWebhookSecret: (id: string, revoke: boolean) =>
    call<{ secret: string; previous_secret_expires_at: string | null }>({
      method: 'POST',
      path: `/api/v1/webhooks/${encodeURIComponent(id)}/secret/rotate`,
      body: { revoke },
    }),
  async webhookDeliveries(id: string, f: { status?: string; limit: number; offset: number }) {
    const { data, headers } = await callWithHeaders<WebhookDelivery[]>({
      path: `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries`,
      query: q(f),
    });
    return { deliveries: data, total: Number(headers.get('content-range')?.split('/')[1] ?? data.length) };
  },
  webhookDelivery: (id: string, delivery: string) =>
    call<WebhookDeliveryDetail>({ path: `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}` }),
  redeliver: (id: string, delivery: string) =>
    call<WebhookDelivery>({
      method: 'POST',
      path: `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}/redeliver`,
    }),
};
