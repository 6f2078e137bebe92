import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/index.js';
import { clientOf, type SignedIn } from '../guards.js';
import type { ReauthProof } from './reauth.js';
import type { UserService } from './service.js';

const Nullable = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);
export const UserPatchBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 1000 })),
    password: Type.Optional(Type.String({ maxLength: 4096 })),
    name: Type.Optional(Nullable(200)),
    avatar: Type.Optional(Nullable(2048)),
    emailRedirectTo: Type.Optional(Type.String({ maxLength: 2048 })),
    /** Reauthentication for a password or email change without a recent sign-in. */
    current_password: Type.Optional(Type.String({ maxLength: 4096 })),
    nonce: Type.Optional(Type.String({ maxLength: 16 })),
  },
  { additionalProperties: false },
);

function signedIn(req: FastifyRequest): SignedIn {
  if (!req.signedIn) throw new ApiError('unauthorized', 'Send the user access token.');
  return req.signedIn;
}

/** Handlers of GET and PATCH /v1/auth/user; the route table is auth/routes.ts. */
export function createUserHandlers(users: UserService) {
  return {
    get: (req: FastifyRequest) => users.get(signedIn(req).userId),
    patch: (req: FastifyRequest<{ Body: typeof UserPatchBody.static }>) => {
      const who = signedIn(req);
      return users.update(who.userId, who.sessionId, req.body, clientOf(req));
    },
    reauthenticate: (req: FastifyRequest) => users.reauthenticate(signedIn(req).userId, clientOf(req)),
    unlink: (req: FastifyRequest) => {
      const who = signedIn(req);
      const proof = req.body && typeof req.body === 'object' ? (req.body as ReauthProof) : {};
      return users.unlinkIdentity(who.userId, who.sessionId, (req.params as { provider: string }).provider, proof, clientOf(req));
    },
  };
}
