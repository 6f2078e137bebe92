import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clientOf } from '../guards.js';
import { tokenOrCode } from '../one-time.js';
import type { MagicLinkService } from './service.js';

export const MagicLinkRequestBody = Type.Object({
  email: Type.String({ maxLength: 1000 }),
  emailRedirectTo: Type.Optional(Type.String({ maxLength: 2048 })),
});
/** The link's `token`, or the `email` and the 6-digit `code` mailed with it. */
export const MagicLinkSignInBody = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 256 })),
  email: Type.Optional(Type.String({ maxLength: 1000 })),
  code: Type.Optional(Type.String({ maxLength: 16 })),
});

/** Handlers of request-magic-link and signin-magic-link; the route table is auth/routes.ts. */
export function createMagicLinkHandlers(magic: MagicLinkService) {
  return {
    request: async (req: FastifyRequest<{ Body: typeof MagicLinkRequestBody.static }>) => {
      await magic.request(req.body, clientOf(req));
      return {};
    },
    signIn: (req: FastifyRequest<{ Body: typeof MagicLinkSignInBody.static }>) =>
      magic.signIn({ token: tokenOrCode(req.body) }, clientOf(req)),
  };
}
