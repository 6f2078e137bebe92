import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

export const RotateBody = Type.Object(
  { revoke: Type.Optional(Type.Boolean({ description: 'Remove the old keys at once: every session signs in again' })) },
  { additionalProperties: false },
);

/** What a rotation answers (the auth area's `rotateSigningKey`). */
export interface RotationAnswer {
  kid: string;
  previous: string[];
  revoked: boolean;
  retire_at: string | null;
  sessions_ended: number;
}

/**
 * `POST /api/v1/admin/signing-keys/rotate {revoke?}` (docs/api.md §4.1): a new ES256 key signs
 * from now on; the old one stays in the JWKS until the longest token lifetime has passed, or
 * with `revoke` goes at once. Mounted by routes.ts; the rotation itself is the auth area's.
 * @example const h = signingKeyHandlers((o) => auth.rotateSigningKey(o)); app.post('/api/v1/admin/signing-keys/rotate', h.rotate)
 */
export function signingKeyHandlers(rotate: (options: { revoke: boolean }) => Promise<RotationAnswer>) {
  return {
    // No body at all is a plain rotation.
    rotate: (req: FastifyRequest<{ Body: { revoke?: boolean } | undefined }>) => rotate({ revoke: req.body?.revoke === true }),
  };
}
