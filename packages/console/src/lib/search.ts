/**
 * URL-state schemas: what each page keeps in its query string, validated (so a hand-edited or
 * stale bookmark never breaks a page) and typed for TanStack Router's `validateSearch`.
 * Unknown or malformed values fall back to the default; nothing secret ever goes here.
 */

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

export const AUTH_SECTIONS = ['methods', 'urls', 'providers', 'templates', 'delivery'] as const;
export interface AuthSearch {
  section?: (typeof AUTH_SECTIONS)[number];
}
export const authSearch = (raw: Raw): AuthSearch => ({ section: oneOf(raw.section, AUTH_SECTIONS) });
