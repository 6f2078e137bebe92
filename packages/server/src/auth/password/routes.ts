import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from '../guards.js';
import { tokenOrCode } from '../one-time.js';
import type { PasswordService } from './service.js';

const Email = Type.String({ maxLength: 1000 });
const Secret = Type.String({ maxLength: 4096 });

export const SignUpBody = Type.Object({
  email: Email,
  password: Secret,
  emailRedirectTo: Type.Optional(Type.String({ maxLength: 2048 })),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export const SignInBody = Type.Object({ email: Email, password: Secret });
export const EmailBody = Type.Object({ email: Email });
/** The link's `token`, or the `email` and the 6-digit `code` mailed with it, and the new password. */
export const ResetBody = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 256 })),
  email: Type.Optional(Type.String({ maxLength: 1000 })),
  code: Type.Optional(Type.String({ maxLength: 16 })),
  password: Secret,
});

type Req<B> = FastifyRequest<{ Body: B }>;

/** Handlers of the email-and-password endpoints; the route table is auth/routes.ts. */
export function createPasswordHandlers(password: PasswordService) {
  return {
    signUp: (req: Req<typeof SignUpBody.static>) => password.signUp(req.body, clientOf(req)),
    signIn: (req: Req<typeof SignInBody.static>) => password.signIn(req.body, clientOf(req)),
    forgot: async (req: Req<typeof EmailBody.static>) => {
      await password.forgotPassword(req.body);
      return {};
    },
    reset: (req: Req<typeof ResetBody.static>, _reply: FastifyReply) =>
      password.resetPassword({ token: tokenOrCode(req.body), password: req.body.password }),
  };
}
