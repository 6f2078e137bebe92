import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/index.js';
import { clientOf, type SignedIn } from '../guards.js';
import type { PasskeyService } from './service.js';

/** The PublicKeyCredential's JSON (`credential.toJSON()`); its shape is checked by the WebAuthn library. */
const Credential = Type.Object({}, { additionalProperties: true });
export const RegisterVerifyBody = Type.Object({ credential: Credential, name: Type.Optional(Type.String({ maxLength: 200 })) });
export const RenameBody = Type.Object({ name: Type.String({ maxLength: 200 }) });
export const PasskeyParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const SignInOptionsBody = Type.Object({ email: Type.Optional(Type.String({ maxLength: 1000 })) });
export const CeremonyBody = Type.Object({
  challenge_id: Type.String({ maxLength: 64 }),
  credential: Credential,
  name: Type.Optional(Type.String({ maxLength: 200 })),
});
export const SignUpOptionsBody = Type.Object({
  email: Type.String({ maxLength: 1000 }),
  emailRedirectTo: Type.Optional(Type.String({ maxLength: 2048 })),
});

function signedIn(req: FastifyRequest): SignedIn {
  if (!req.signedIn) throw new ApiError('unauthorized', 'Send the user access token.');
  return req.signedIn;
}

type WithId = FastifyRequest<{ Params: typeof PasskeyParams.static }>;

/** Handlers of /v1/auth/passkeys…; the route table is auth/routes.ts. */
export function createPasskeyHandlers(passkeys: PasskeyService) {
  return {
    registerOptions: (req: FastifyRequest) => passkeys.registerOptions(signedIn(req)),
    registerVerify: (req: FastifyRequest<{ Body: typeof RegisterVerifyBody.static }>) => passkeys.registerVerify(signedIn(req), req.body),
    list: (req: FastifyRequest) => passkeys.list(signedIn(req).userId),
    rename: (req: FastifyRequest<{ Params: typeof PasskeyParams.static; Body: typeof RenameBody.static }>) =>
      passkeys.rename(signedIn(req).userId, req.params.id, req.body.name),
    remove: async (req: WithId) => {
      if (!(await passkeys.remove(signedIn(req).userId, req.params.id)))
        throw new ApiError('passkey_not_found', 'No passkey with this id belongs to the signed-in user.');
      return { id: req.params.id };
    },
    signInOptions: (req: FastifyRequest<{ Body: typeof SignInOptionsBody.static }>) => passkeys.signInOptions(req.body ?? {}),
    signInVerify: (req: FastifyRequest<{ Body: typeof CeremonyBody.static }>) => passkeys.signInVerify(req.body, clientOf(req)),
    signUpOptions: (req: FastifyRequest<{ Body: typeof SignUpOptionsBody.static }>) => passkeys.signUpOptions(req.body),
    signUpVerify: (req: FastifyRequest<{ Body: typeof CeremonyBody.static }>) => passkeys.signUpVerify(req.body, clientOf(req)),
  };
}
