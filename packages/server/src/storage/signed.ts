/**
 * Signed URLs: `GET {base}/api/v1/storage/sign/{bucket}/{path}?token=…` reads one object
 * without any header until the token expires. The token is an ES256 JWT of the project key
 * with its own `typ` and audience (made by the auth area's TokenService, handed in by app.ts),
 * bound to bucket, name and expiry: it is never accepted as an access token, nor an access
 * token as one of these.
 */
import { ApiError } from '../http/index.js';

export interface UrlTokens {
  sign(payload: Record<string, unknown>, ttlSeconds: number): Promise<string>;
  /** The payload of a valid, unexpired token of this kind, else null. */
  verify(token: string): Promise<Record<string, unknown> | null>;
}

export interface SignedUrls {
  /** The absolute signed URL of an object, valid `expiresIn` seconds. */
  sign(bucket: string, name: string, expiresIn: number): Promise<string>;
  /** Checks a token against the path it came with; 400 `token_invalid` when it is not for it or expired. */
  verify(token: string, bucket: string, name: string): Promise<{ exp: number }>;
}

/**
 * An object name in a URL path: each folder percent-encoded, the `/` between them kept.
 * @example encodePath('my photos/a#1.png') // 'my%20photos/a%231.png'
 */
export function encodePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

/**
 * @example const signed = createSignedUrls({ sign: tokens.signObjectUrl, verify: tokens.verifyObjectUrl }, 'http://localhost:8080');
 */
export function createSignedUrls(tokens: UrlTokens, publicUrl: string): SignedUrls {
  return {
    async sign(bucket, name, expiresIn) {
      const token = await tokens.sign({ b: bucket, o: name }, expiresIn);
      return `${publicUrl}/api/v1/storage/sign/${encodeURIComponent(bucket)}/${encodePath(name)}?token=${token}`;
    },
    async verify(token, bucket, name) {
      const p = await tokens.verify(token);
      if (!p || p.b !== bucket || p.o !== name || typeof p.exp !== 'number') {
        throw new ApiError('token_invalid', 'The signed URL is invalid or has expired; ask for a new one.');
      }
      return { exp: p.exp };
    },
  };
}
