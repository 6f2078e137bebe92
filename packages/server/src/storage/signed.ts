/**
 * Signed URLs: `GET {base}/api/v1/storage/sign/{bucket}/{path}?token=…` reads one object
 * without any header until the token expires. The token is an ES256 JWT of the project key
 * with its own `typ` and audience (made by the auth area's TokenService, handed in by app.ts):
 * it is never accepted as an access token, nor an access token as one of these. It is bound to
 * the object, not only its name: bucket, name, the object's id and its ETag (its version), so
 * a deleted or replaced object ends the URL; what is uploaded later under that name is not
 * served to it.
 */
import { ApiError } from '../http/index.js';

export interface UrlTokens {
  sign(payload: Record<string, unknown>, ttlSeconds: number): Promise<string>;
  /** The payload of a valid, unexpired token of this kind, else null. */
  verify(token: string): Promise<Record<string, unknown> | null>;
}

/** The object a URL is signed for: where it is and which version. */
export interface SignedObject {
  bucket: string;
  name: string;
  id: string;
  etag: string;
}

export interface SignedUrls {
  /** The absolute signed URL of an object, valid `expiresIn` seconds. */
  sign(object: SignedObject, expiresIn: number): Promise<string>;
  /**
   * Checks a token against the path it came with; 400 `token_invalid` when it is not for it or
   * expired. The object it was signed for: its id and ETag, to be compared with what is there now.
   */
  verify(token: string, bucket: string, name: string): Promise<{ exp: number; id: string; etag: string }>;
}

/**
 * An object name in a URL path: each folder percent-encoded, the `/` between them kept.
 * @example encodePath('my photos/a#1.png') // 'my%20photos/a%231.png'
 */
export function encodePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

const invalid = () => new ApiError('token_invalid', 'The signed URL is invalid or has expired; ask for a new one.');

/**
 * @example const signed = createSignedUrls({ sign: tokens.signObjectUrl, verify: tokens.verifyObjectUrl }, 'http://localhost:8080');
 */
export function createSignedUrls(tokens: UrlTokens, publicUrl: string): SignedUrls {
  return {
    async sign(object, expiresIn) {
      const token = await tokens.sign({ b: object.bucket, o: object.name, i: object.id, e: object.etag }, expiresIn);
      return `${publicUrl}/api/v1/storage/sign/${encodeURIComponent(object.bucket)}/${encodePath(object.name)}?token=${token}`;
    },
    async verify(token, bucket, name) {
      const p = await tokens.verify(token);
      // Tokens without the object's id and ETag (made before they were bound) are refused too.
      if (!p || p.b !== bucket || p.o !== name || typeof p.exp !== 'number' || typeof p.i !== 'string' || typeof p.e !== 'string') {
        throw invalid();
      }
      return { exp: p.exp, id: p.i, etag: p.e };
    },
  };
}
