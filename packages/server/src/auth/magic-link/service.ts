import type { Session } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/errors.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { consumeOneTimeToken, issueOneTimeToken } from '../one-time.js';
import type { SessionService } from '../sessions/service.js';
import { iso, normalizeEmail } from '../validate.js';

const INVALID = 'The sign-in link is invalid, expired or already used; ask for a new one.';

/**
 * Magic links (API.md §4): a link mailed to `magic_link_url?token=…` signs the user in once
 * within 15 minutes. Unknown emails get the same answer; their account is made when the link
 * is used, and the first use confirms the email.
 * @example const magic = magicLinkService(deps, sessions); await magic.request({ email }); await magic.signIn({ token }, client);
 */
export function magicLinkService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, limits, outbox } = deps;

  function assertEnabled() {
    if (!settings.auth().magic_link_enabled) throw new ApiError('provider_disabled', 'Magic-link sign-in is disabled for this project.');
  }

  /** The user for a used link: the one it was issued to, else the one with the email now, else a new one. */
  async function userFor(tx: Queryable, userId: string | null, email: string, now: string): Promise<string> {
    if (userId) return userId;
    const inserted = await tx.query<{ id: string }>(
      `insert into auth.users (email, email_confirmed_at, created_at, updated_at) values ($1, $2::timestamptz, $2::timestamptz, $2::timestamptz)
       on conflict (email) do nothing returning id`,
      [email, now],
    );
    const id = inserted.rows[0]?.id ?? (await tx.query<{ id: string }>('select id from auth.users where email = $1', [email])).rows[0]?.id;
    if (!id) throw new ApiError('magic_link_invalid', INVALID);
    await tx.query(
      `insert into auth.identities (user_id, provider, provider_user_id, email, created_at) values ($1, 'email', $2, $3, $4::timestamptz)
       on conflict (provider, provider_user_id) do nothing`,
      [id, id, email, now],
    );
    return id;
  }

  return {
    /** 200 always, for known and unknown emails; 429 after too many emails to one address. */
    async request(input: { email: unknown; emailRedirectTo?: unknown }): Promise<void> {
      assertEnabled();
      const email = normalizeEmail(input.email);
      const redirect = input.emailRedirectTo;
      if (redirect !== undefined && (typeof redirect !== 'string' || !settings.isRedirectAllowed(redirect))) {
        throw new ApiError('redirect_not_allowed', 'emailRedirectTo is not in the allowed redirect URLs of the project.');
      }
      const page = (redirect as string | undefined) ?? settings.auth().magic_link_url;
      if (!page)
        throw new ApiError('invalid_request', 'Magic links need the magic_link_url auth setting (the page that receives ?token=).');
      await limits.assertEmail(email);
      await db.transaction(async (tx) => {
        const known = await tx.query<{ id: string }>('select id from auth.users where email = $1', [email]);
        const raw = await issueOneTimeToken(
          tx,
          { kind: 'magic_link', userId: known.rows[0]?.id ?? null, email, ttlMs: deps.config.magicLinkTtlMs },
          clock.now(),
        );
        await queueAuthEmail(outbox, tx, 'magic_link', email, linkWithToken(page, raw));
      });
      outbox.kick();
    },

    /**
     * 200 session; 401 magic_link_invalid for an expired, used or unknown token. The token is
     * consumed by one conditional UPDATE: of two simultaneous uses exactly one signs in.
     */
    async signIn(input: { token: unknown }, client: ClientInfo): Promise<Session> {
      assertEnabled();
      const now = iso(clock.now());
      const started = await db.transaction(async (tx) => {
        const used = await consumeOneTimeToken(tx, input.token, ['magic_link'], clock.now());
        if (!used?.email) return null;
        const userId = await userFor(tx, used.userId, used.email, now);
        const { rows } = await tx.query<{ email: string | null; confirmed: boolean }>(
          'select email, email_confirmed_at is not null as confirmed from auth.users where id = $1 for update',
          [userId],
        );
        // Only while the account still has the address the link went to.
        if (rows[0]?.email !== used.email) return null;
        if (!rows[0].confirmed) {
          await tx.query('update auth.users set email_confirmed_at = $2::timestamptz, updated_at = $2::timestamptz where id = $1', [
            userId,
            now,
          ]);
          // The address is proven only now: a password set before by whoever signed up with it
          // (maybe not its owner) and the sessions that password opened are dropped.
          await tx.query('delete from auth.passwords where user_id = $1', [userId]);
          await sessions.revoke(tx, userId);
        }
        return { userId, ...(await sessions.start(tx, userId, client)) };
      });
      if (!started) throw new ApiError('magic_link_invalid', INVALID);
      return sessions.issue(started.userId, started.sessionId, started.refreshToken);
    },
  };
}

export type MagicLinkService = ReturnType<typeof magicLinkService>;
