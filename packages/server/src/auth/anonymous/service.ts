import type { Session } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SessionService } from '../sessions/service.js';
import { checkUserData } from '../validate.js';

/**
 * Anonymous sign-in (the `anonymous_sign_in_enabled` setting, off by default): a real user with no
 * email, phone or identity (`is_anonymous` in its token, auth/sessions/claims.ts), under the same
 * RLS as any `authenticated` user; upgraded in place when it adds an email (the email-change
 * link) or a phone. At most 30 an hour per IP.
 * @example const anon = createAnonymousService(deps, sessions); const session = await anon.signIn({ data: { theme: 'dark' } }, client);
 */
export function createAnonymousService(deps: AuthDeps, sessions: SessionService) {
  const { settings, limits, accounts } = deps;
  return {
    async signIn(input: { data?: unknown }, client: ClientInfo): Promise<Session> {
      if (!settings.auth().anonymous_sign_in_enabled) {
        throw new ApiError('provider_disabled', 'Anonymous sign-in is off for this project (anonymous_sign_in_enabled).');
      }
      const data = checkUserData(input.data);
      await limits.assertAnonymous(client.ip);
      return sessions.signInWith(
        client,
        async (tx, now) => (await accounts.createUser(tx, { data }, now)) ?? new ApiError('internal_error', 'The user could not be made.'),
        'anonymous',
      );
    },
  };
}

export type AnonymousService = ReturnType<typeof createAnonymousService>;
