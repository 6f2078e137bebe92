import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/index.js';
import { clientOf, type SignedIn } from '../guards.js';
import type { MfaService } from './service.js';

export const EnrollBody = Type.Object({
  factor_type: Type.String({ maxLength: 16, description: '`totp` or `webauthn`' }),
  friendly_name: Type.Optional(Type.String({ maxLength: 200 })),
});
export const VerifyFactorBody = Type.Object({
  challenge_id: Type.String({ maxLength: 64 }),
  code: Type.Optional(Type.String({ maxLength: 16 })),
  /** A WebAuthn factor's answer: the PublicKeyCredential's JSON (checked by the WebAuthn library). */
  credential: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
export const RecoverBody = Type.Object({ code: Type.String({ maxLength: 64 }) });
export const FactorParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

type WithId = FastifyRequest<{ Params: typeof FactorParams.static }>;

function signedIn(req: FastifyRequest): SignedIn {
  if (!req.signedIn) throw new ApiError('unauthorized', 'Send the user access token.');
  return req.signedIn;
}

/** Handlers of /v1/auth/factors…; the route table is auth/routes.ts. */
export function createMfaHandlers(mfa: MfaService) {
  return {
    list: (req: FastifyRequest) => mfa.list(signedIn(req).userId),
    enroll: (req: FastifyRequest<{ Body: typeof EnrollBody.static }>) =>
      req.body.factor_type === 'webauthn' ? mfa.enrollWebAuthn(signedIn(req), req.body) : mfa.enroll(signedIn(req), req.body),
    challenge: (req: WithId) => mfa.challenge(signedIn(req), req.params.id),
    verify: (req: FastifyRequest<{ Params: typeof FactorParams.static; Body: typeof VerifyFactorBody.static }>) =>
      mfa.verify(signedIn(req), req.params.id, req.body, clientOf(req)),
    unenroll: (req: WithId) => mfa.unenroll(signedIn(req), req.params.id),
    recoveryCodes: (req: FastifyRequest) => mfa.recoveryCodes(signedIn(req)),
    recover: (req: FastifyRequest<{ Body: typeof RecoverBody.static }>) => mfa.recover(signedIn(req), req.body, clientOf(req)),
  };
}
