import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { VerificationService } from './service.js';

export const TokenBody = Type.Object({ token: Type.String({ maxLength: 256 }) });
export const ResendBody = Type.Object({ email: Type.String({ maxLength: 1000 }) });

/** Handlers of verify-email and resend-verification; the route table is auth/routes.ts. */
export function createVerificationHandlers(verification: VerificationService) {
  return {
    verify: (req: FastifyRequest<{ Body: typeof TokenBody.static }>) => verification.verifyEmail(req.body),
    resend: async (req: FastifyRequest<{ Body: typeof ResendBody.static }>) => {
      await verification.resend(req.body);
      return {};
    },
  };
}
