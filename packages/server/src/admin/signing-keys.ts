import type { SigningKeyRotation } from '@plinth/shared';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';

/** What a rotation answers (the auth area's `rotateSigningKey`). */
export type RotationAnswer = SigningKeyRotation;

/**
 * `POST /api/v1/admin/signing-keys/rotate {revoke?}` (docs/api.md §4.1): a new ES256 key signs
 * from now on; the old one stays in the JWKS until the longest token lifetime has passed, or
 * with `revoke` goes at once. Mounted by routes.ts; the rotation itself is the auth area's.
 * @example const h = createSigningKeyHandlers((o) => auth.rotateSigningKey(o)); app.post('/api/v1/admin/signing-keys/rotate', h.rotate)
 */
export function createSigningKeyHandlers(rotate: (options: { revoke: boolean }) => Promise<RotationAnswer>) {
  return {
    // No body schema: no body at all (curl -X POST) is a plain rotation.
    rotate: (req: FastifyRequest) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const extra = Object.keys(body).find((k) => k !== 'revoke');
      if (typeof body !== 'object' || extra !== undefined || (body.revoke !== undefined && typeof body.revoke !== 'boolean')) {
        throw new ApiError('invalid_request', 'The body is {"revoke": true|false}, or nothing.', [
          { field: extra ? `body.${extra}` : 'body.revoke', message: extra ? 'is not allowed' : 'must be a boolean' },
        ]);
      }
      return rotate({ revoke: body.revoke === true });
    },
  };
}
