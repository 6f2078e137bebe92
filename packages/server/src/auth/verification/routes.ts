import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { tokenOrCode } from '../one-time.js';
import type { VerificationService } from './service.js';

/** The link's `token`, or the `email` and the 6-digit `code` mailed with it. */
export const TokenBody = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 256 })),
  email: Type.Optional(Type.String({ maxLength: 1000 })),
  code: Type.Optional(Type.String({ maxLength: 16 })),
});
export const ResendBody = Type.Object({ email: Type.String({ maxLength: 1000 }) });

/** Handlers of verify-email and resend-verification; the route table is auth/routes.ts. */
export function createVerificationHandlers(verification: VerificationService) {
  return {
    verify: (req: FastifyRequest<{ Body: typeof TokenBody.static }>) => verification.verifyEmail({ token: tokenOrCode(req.body) }),
    resend: async (req: FastifyRequest<{ Body: typeof ResendBody.static }>) => {
      await verification.resend(req.body);
      return {};
    },
  };
}
