import type { Logger } from 'pino';
import type { Queryable } from '../db/index.js';
import type { MessageKind, OutgoingMessage, Outbox } from '../messaging/index.js';
import type { AuthHooks } from './hooks.js';

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

/** Plinth's email kinds as GoTrue's `email_action_type`. */
const ACTION_TYPES: Partial<Record<MessageKind, string>> = {
  verification: 'signup',
  reset: 'recovery',
  magic_link: 'magiclink',
  email_change: 'email_change',
  reauthentication: 'reauthentication',
};

/** The user a message is for, in GoTrue's shape (a magic link to an address with no account yet: the address only). */
async function hookUser(tx: Queryable, message: OutgoingMessage): Promise<Record<string, unknown>> {
  const column = message.channel === 'email' ? 'email' : 'phone';
  const { rows } = await tx.query<Record<string, unknown>>(
    `select id, email, phone, email_confirmed_at, phone_confirmed_at, created_at, data as user_metadata
     from auth.users where ${column} = $1`,
    [message.to],
  );
  const u = rows[0];
  const base = { aud: 'authenticated', role: 'authenticated' };
  if (!u) return { ...base, id: null, [column]: message.to, user_metadata: {}, app_metadata: {} };
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : (v ?? null));
  return {
    ...base,
    id: u.id,
    email: u.email ?? '',
    phone: u.phone ?? '',
    email_confirmed_at: iso(u.email_confirmed_at),
    phone_confirmed_at: iso(u.phone_confirmed_at),
    created_at: iso(u.created_at),
    user_metadata: u.user_metadata ?? {},
    app_metadata: {},
  };
}

/**
 * GoTrue's send-email payload of a queued auth email: `token` is the 6-digit code, `token_hash`
 * the link's token (what `verifyOtp({token_hash, type})` takes), `redirect_to` the page the
 * link opens, `site_url` the project's first allowed redirect URL.
 */
function emailData(message: OutgoingMessage, siteUrl: string): Record<string, string> {
  const d = message.data;
  let token = '';
  let redirectTo = '';
  if (d.link) {
    const url = new URL(d.link);
    token = url.searchParams.get('token') ?? url.searchParams.get('code') ?? '';
    url.searchParams.delete('token');
    url.searchParams.delete('code');
    redirectTo = url.toString();
  }
  return {
    token: d.code ?? '',
    token_hash: token,
    redirect_to: redirectTo,
    email_action_type: ACTION_TYPES[message.kind] ?? message.kind,
    site_url: siteUrl,
    token_new: '',
    token_hash_new: '',
    ...(d.new_email ? { new_email: d.new_email } : {}),
  };
}

/**
 * The outbox of the auth flows with the send hooks in front (docs/auth.md, "Auth hooks"): while
 * a send-email (send-SMS) hook is set, an email (SMS) is handed to it in the caller's
 * transaction instead of being queued, so a hook that fails fails the request (502
 * `send_hook_failed`) and rolls its change back. A message the per-recipient limit would hold
 * back (`notBefore`) is not handed over at all (logged): the hook is not flooded either.
 * @example const outbox = hookedOutbox(deps.outbox, hooks, () => settings.auth().allowed_redirect_urls[0] ?? publicUrl, clock.now, log);
 */
export function hookedOutbox(outbox: Outbox, hooks: AuthHooks, siteUrl: () => string, now: () => number, log: Logger): Outbox {
  return {
    kick: () => outbox.kick(),
    async enqueue(tx, message) {
      if (!hooks.sends(message.channel)) return outbox.enqueue(tx, message);
      if (message.notBefore && message.notBefore > now()) {
        log.warn(
          { channel: message.channel, kind: message.kind },
          'auth: a message held back by the per-recipient limit is not handed to the send hook',
        );
        return 'held';
      }
      const user = await hookUser(tx, message);
      const payload =
        message.channel === 'email' ? { user, email_data: emailData(message, siteUrl()) } : { user, sms: { otp: message.data.code ?? '' } };
      await hooks.send(message.channel, payload, tx);
      return 'hook';
    },
  };
}
