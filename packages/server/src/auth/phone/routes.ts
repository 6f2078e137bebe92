import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clientOf } from '../guards.js';
import type { PhoneService } from './service.js';

export const SendCodeBody = Type.Object({ phone: Type.String({ maxLength: 32 }) });
export const VerifyCodeBody = Type.Object({ phone: Type.String({ maxLength: 32 }), code: Type.String({ maxLength: 16 }) });

/** Handlers of phone/send-otp and phone/verify; the route table is auth/routes.ts. */
export function createPhoneHandlers(phone: PhoneService) {
  return {
    send: (req: FastifyRequest<{ Body: typeof SendCodeBody.static }>) => phone.sendCode(req.body, clientOf(req)),
    verify: (req: FastifyRequest<{ Body: typeof VerifyCodeBody.static }>) => phone.verify(req.body, clientOf(req)),
  };
}
