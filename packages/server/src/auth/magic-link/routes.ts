import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clientOf } from '../guards.js';
import type { MagicLinkService } from './service.js';

export const MagicLinkRequestBody = Type.Object({
  email: Type.String({ maxLength: 1000 }),
  emailRedirectTo: Type.Optional(Type.String({ maxLength: 2048 })),
});
export const MagicLinkSignInBody = Type.Object({ token: Type.String({ maxLength: 256 }) });

/** Handlers of request-magic-link and signin-magic-link; the route table is auth/routes.ts. */
export function createMagicLinkHandlers(magic: MagicLinkService) {
  return {
    request: async (req: FastifyRequest<{ Body: typeof MagicLinkRequestBody.static }>) => {
      await magic.request(req.body, clientOf(req));
      return {};
    },
    signIn: (req: FastifyRequest<{ Body: typeof MagicLinkSignInBody.static }>) => magic.signIn(req.body, clientOf(req)),
  };
}
