import type { Passkey } from '@plinth/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from '../../auth/index.js';
import { ApiError } from '../../http/index.js';
import { isUuid } from '../../lib/index.js';
import { GoTrueError } from './errors.js';
import type { FaceDeps } from './routes.js';

type Body = Record<string, unknown>;

const bodyOf = (req: FastifyRequest): Body =>
  typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? (req.body as Body) : {};

function signedIn(req: FastifyRequest) {
  if (!req.signedIn) throw new ApiError('unauthorized', 'Send the user access token.');
  return req.signedIn;
}

/** GoTrue's passkey list item: `friendly_name`, `last_used_at` only once used. */
export function toGoTruePasskey(k: Passkey) {
  return {
    id: k.id,
    ...(k.name ? { friendly_name: k.name } : {}),
    created_at: k.created_at,
    ...(k.last_used_at ? { last_used_at: k.last_used_at } : {}),
  };
}

/** GoTrue checks a ceremony's body before the challenge: `challenge_id` (a uuid) and `credential` are required. */
function ceremony(b: Body): { challenge_id: string; credential: unknown } {
  if (typeof b.challenge_id !== 'string' || b.challenge_id === '')
    throw new GoTrueError(400, 'validation_failed', 'challenge_id is required');
  if (b.credential === undefined || b.credential === null) throw new GoTrueError(400, 'validation_failed', 'credential is required');
  if (!isUuid(b.challenge_id)) throw new GoTrueError(400, 'validation_failed', 'challenge_id must be a valid UUID');
  return { challenge_id: b.challenge_id, credential: b.credential };
}

const passkeyNotFound = () => new GoTrueError(404, 'validation_failed', 'Passkey not found');

/**
 * GoTrue's passkey endpoints (`/passkeys/…`, `/admin/users/{id}/passkeys…`) on Plinth's passkey
 * service (auth/passkeys): the same relying party, challenges (5 minutes, single use, bound
 * to the user who asked), counter check and session rules; only the paths and shapes are GoTrue's.
 */
export function createPasskeyFace(deps: FaceDeps, session: (set: import('@plinth/shared').Session) => Promise<unknown>) {
  const { auth, db } = deps;
  const passkeys = auth.services.passkeys;

  return {
    /** POST /passkeys/registration/options → `{challenge_id, options, expires_at}`. */
    registrationOptions: async (req: FastifyRequest) => passkeys.startRegistration(signedIn(req)),

    /** POST /passkeys/registration/verify `{challenge_id, credential}` → `{id, friendly_name, created_at}`. */
    registrationVerify: async (req: FastifyRequest) => {
      const input = ceremony(bodyOf(req));
      return toGoTruePasskey(await passkeys.registerVerify(signedIn(req), input));
    },

    /** POST /passkeys/authentication/options → `{challenge_id, options, expires_at}` (username-less). */
    authenticationOptions: async () => passkeys.signInOptions({}),

    /** POST /passkeys/authentication/verify `{challenge_id, credential}` → GoTrue's session. */
    authenticationVerify: async (req: FastifyRequest) => session(await passkeys.signInVerify(ceremony(bodyOf(req)), clientOf(req))),

    list: async (req: FastifyRequest) => (await passkeys.list(signedIn(req).userId)).passkeys.map(toGoTruePasskey),

    /** PATCH /passkeys/{id} `{friendly_name}`. */
    update: async (req: FastifyRequest) => {
      const name = bodyOf(req).friendly_name;
      if (typeof name !== 'string' || name === '') throw new GoTrueError(400, 'validation_failed', 'friendly_name is required');
      if (name.length > 120) throw new GoTrueError(400, 'validation_failed', 'friendly_name must be 120 characters or less');
      const id = (req.params as { id: string }).id;
      try {
        return toGoTruePasskey(await passkeys.rename(signedIn(req).userId, id, name));
      } catch (err) {
        if (err instanceof ApiError && err.code === 'passkey_not_found') throw passkeyNotFound();
        throw err;
      }
    },

    /** DELETE /passkeys/{id} → 204. */
    remove: async (req: FastifyRequest, reply: FastifyReply) => {
      if (!(await passkeys.remove(signedIn(req).userId, (req.params as { id: string }).id))) throw passkeyNotFound();
      return reply.code(204).send();
    },

    /** GET /admin/users/{id}/passkeys (secret key). */
    adminList: async (req: FastifyRequest) => {
      const userId = await existingUser(req);
      return (await passkeys.list(userId)).passkeys.map(toGoTruePasskey);
    },

    /** DELETE /admin/users/{id}/passkeys/{passkeyId} (secret key) → 204. */
    adminRemove: async (req: FastifyRequest, reply: FastifyReply) => {
      const userId = await existingUser(req);
      if (!(await passkeys.remove(userId, (req.params as { passkeyId: string }).passkeyId))) throw passkeyNotFound();
      return reply.code(204).send();
    },
  };

  async function existingUser(req: FastifyRequest): Promise<string> {
    const id = (req.params as { id?: string }).id ?? '';
    if (!isUuid(id) || !(await auth.accounts.findUser(db, id))) throw new ApiError('user_not_found', 'User not found');
    return id;
  }
}

export type PasskeyFace = ReturnType<typeof createPasskeyFace>;
