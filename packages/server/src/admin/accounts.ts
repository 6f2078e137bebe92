import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { AdminService } from './admins.js';

/** `{email, password}`: the body of both routes (the password is checked by the admin rules: 12 to 128 characters). */
export const AdminAccountBody = Type.Object(
  { email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

type AccountRequest = FastifyRequest<{ Body: { email: string; password: string } }>;

/**
 * Console admins made or changed with the secret key (docs/api.md, the console and administration): what `plinth admin create`
 * and `set-password` send while the embedded server holds the database.
 * - `POST /api/v1/admins`: creates the admin (201), or sets the password of an existing one (200);
 * - `POST /api/v1/admins/password`: sets an existing admin's password and ends its console
 *   sessions; 404 `not_found` when there is no such admin.
 * @example const h = createAdminAccountHandlers(admins); app.post('/api/v1/admins', { onRequest: manage }, h.create);
 */
export function createAdminAccountHandlers(admins: AdminService) {
  return {
    async create(req: AccountRequest, reply: FastifyReply) {
      const { admin, created } = await admins.upsert(req.body.email, req.body.password);
      reply.code(created ? 201 : 200);
      return { admin, created };
    },
    async setPassword(req: AccountRequest) {
      const email = req.body.email.trim().toLowerCase();
      if (!(await admins.setPassword(req.body.email, req.body.password))) {
        throw new ApiError('not_found', `No admin ${email.slice(0, 320)}: create it first (POST /api/v1/admins).`);
      }
      return { email };
    },
  };
}
