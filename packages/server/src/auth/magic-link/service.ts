import type { Session } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { consumeOneTimeToken, issueOneTimeTokenWithCode, type PkceChallenge, pkcePayload, pkceRefused } from '../one-time.js';
import type { SessionService } from '../sessions/service.js';
import { allowedRedirect, normalizeEmail } from '../validate.js';

const INVALID = 'The sign-in link is invalid, expired or already used; ask for a new one.';

/**
 * Magic links (docs/api.md §5): a link mailed to `magic_link_url?token=…` signs the user in once
 * within 15 minutes. Unknown emails get the same answer; their account is made when the link
 * is used, and the first use proves the email (accounts.proveEmail).
 * @example const magic = createMagicLinkService(deps, sessions); await magic.request({ email }, client); await magic.signIn({ token }, client);
 */
export function createMagicLinkService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, limits, outbox, accounts } = deps;

  function assertEnabled() {
    if (!settings.auth().magic_link_enabled) throw new ApiError('provider_disabled', 'Magic-link sign-in is disabled for this project.');
  }

  /** The user for a used link: the one it was issued to, else the one with the email now, else a new one. */
  async function userFor(tx: Queryable, userId: string | null, email: string, now: number): Promise<string | null> {
    if (userId) return userId;
    const id =
      (await accounts.createUser(tx, { email, emailConfirmed: true }, now)) ??
      (await tx.query<{ id: string }>('select id from auth.users where email = $1', [email])).rows[0]?.id ??
      null;
    if (id) await accounts.linkEmail(tx, id, email, now);
    return id;
  }

  return {
    /**
     * 200 always, for known and unknown emails; 429 after too many emails to one address. The
     * answer goes before the work; mail to addresses with no account also counts against a
     * per-IP budget (over it, nothing is sent: a 429 there would tell which addresses exist).
     */
    async request(input: { email: unknown; emailRedirectTo?: unknown; pkce?: PkceChallenge }, client: ClientInfo): Promise<void> {
      assertEnabled();
      const email = normalizeEmail(input.email);
      const page = allowedRedirect(settings, input.emailRedirectTo, 'emailRedirectTo') ?? settings.auth().magic_link_url;
      if (!page)
        throw new ApiError('invalid_request', 'Magic links need the magic_link_url auth setting (the page that receives ?token=).');
      await limits.assertEmail(email);
      deps.later(async () => {
        const known = (await db.query<{ id: string }>('select id from auth.users where email = $1', [email])).rows[0]?.id ?? null;
        if (!known && !(await limits.tryUnknownRecipient(client.ip))) {
          deps.log.warn('magic link: this IP used up its budget of mails to addresses without an account; none sent');
          return;
        }
        await db.transaction(async (tx) => {
          const { raw, code } = await issueOneTimeTokenWithCode(
            tx,
            { kind: 'magic_link', userId: known, email, ttlMs: deps.config.magicLinkTtlMs, payload: pkcePayload(input.pkce) },
            clock.now(),
          );
          await queueAuthEmail(outbox, tx, 'magic_link', email, linkWithToken(page, raw, input.pkce ? 'code' : 'token'), undefined, code);
        });
        outbox.kick();
      });
    },

    /**
     * 200 session; 401 magic_link_invalid for an expired, used or unknown token. The token is
     * consumed by one conditional UPDATE: of two simultaneous uses exactly one signs in.
     */
    async signIn(input: { token: unknown; codeVerifier?: unknown }, client: ClientInfo): Promise<Session> {
      assertEnabled();
      const invalid = new ApiError('magic_link_invalid', INVALID);
      return sessions.signInWith(
        client,
        async (tx, now) => {
          const used = await consumeOneTimeToken(tx, input.token, ['magic_link'], now);
          if (!used?.email || pkceRefused(used.payload, input.codeVerifier)) return invalid;
          const userId = await userFor(tx, used.userId, used.email, now);
          if (!userId) return invalid;
          // The link proves the address; a link for an address the account no longer has is void.
          if ((await accounts.proveEmail(tx, userId, used.email, {}, now)) === 'moved') return invalid;
          return userId;
        },
        'magic_link',
      );
    },
  };
}

export type MagicLinkService = ReturnType<typeof createMagicLinkService>;
