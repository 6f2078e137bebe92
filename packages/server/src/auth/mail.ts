import type { Queryable } from '../db/index.js';
import type { MessageKind, Outbox } from '../messaging/index.js';

/**
 * The app page's URL with `?token=` set (other query parameters kept); `?code=` for a link
 * bound to a PKCE challenge (what a PKCE client's callback exchanges, supabase/auth).
 * @example linkWithToken('https://app.example.com/verify?x=1', 'abc') // 'https://app.example.com/verify?x=1&token=abc'
 */
export function linkWithToken(page: string, token: string, param: 'token' | 'code' = 'token'): string {
  const url = new URL(page);
  url.searchParams.set(param, token);
  return url.toString();
}

/**
 * Queues an auth email in the caller's transaction (sent after commit; nothing is sent if the
 * change rolls back), not before `notBefore` when given, with the token's 6-digit `code` beside
 * the link when given (one-time.ts). The caller kicks the outbox once the
 * transaction has committed.
 * @example await queueAuthEmail(outbox, tx, 'reset', email, linkWithToken(page, raw));
 */
export async function queueAuthEmail(
  outbox: Outbox,
  tx: Queryable,
  kind: MessageKind,
  to: string,
  link: string,
  notBefore?: number,
  code?: string,
): Promise<void> {
  const data: Record<string, string> = code ? { link, email: to, code } : { link, email: to };
  await outbox.enqueue(tx, { channel: 'email', kind, to, data, ...(notBefore ? { notBefore } : {}) });
}
