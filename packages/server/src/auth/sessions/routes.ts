import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/index.js';
import type { SessionService } from './service.js';

export const RefreshBody = Type.Object({ refresh_token: Type.String({ maxLength: 512 }) });

/** Handlers of refresh and sign-out; the route table is auth/routes.ts. */
export function createSessionHandlers(sessions: SessionService) {
  return {
    refresh: (req: FastifyRequest<{ Body: typeof RefreshBody.static }>) => sessions.refresh(req.body.refresh_token),
    // No body schema: clients may send no body at all (scope defaults to local).
    signOut: async (req: FastifyRequest, reply: FastifyReply) => {
      const scope = (req.body as { scope?: unknown } | null | undefined)?.scope ?? 'local';
      if (scope !== 'local' && scope !== 'global')
        throw new ApiError('invalid_request', 'scope must be "local" or "global".', [{ field: 'body.scope', message: 'is invalid' }]);
      const who = req.signedIn;
      if (who) await sessions.signOut(who.userId, who.sessionId, scope);
      return reply.code(204).send();
    },
  };
}
