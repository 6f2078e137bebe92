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
import { type ImageTransform, transformOf } from './transform.js';

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

/** Where a signed upload URL may write, as whom, and the state of that name when it was signed. */
export interface SignedUpload {
  bucket: string;
  name: string;
  /** The signer's `auth.uid()` (the uploaded object's owner), null for anon and the secret key. */
  owner: string | null;
  upsert: boolean;
  /** `stateOf` the name when signed: the upload goes through only while it is unchanged (single use). */
  state: string;
}

export interface SignedUrls {
  /** The absolute signed URL of an object, valid `expiresIn` seconds. */
  sign(object: SignedObject, expiresIn: number): Promise<string>;
  /** The token alone (a face that builds its own URL around it, docs/supabase.md); with `transform`, the image transform it serves, bound in. */
  token(object: SignedObject, expiresIn: number, transform?: ImageTransform | null): Promise<string>;
  /** A token for one upload to one name (`SignedUpload`); refused as a download token, and the reverse. */
  signUpload(target: SignedUpload, expiresIn: number): Promise<string>;
  /** The upload a token allows at this path; 400 `token_invalid` when it is not for it, expired, or a download token. */
  verifyUpload(token: string, bucket: string, name: string): Promise<SignedUpload>;
  /**
   * Checks a token against the path it came with; 400 `token_invalid` when it is not for it or
   * expired. The object it was signed for: its id and ETag, to be compared with what is there now.
   */
  verify(token: string, bucket: string, name: string): Promise<{ exp: number; id: string; etag: string; transform: ImageTransform | null }>;
}

/**
 * An object name in a URL path: each folder percent-encoded, the `/` between them kept.
 * @example encodePath('my photos/a#1.png') // 'my%20photos/a%231.png'
 */
export function encodePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

/** The kind marker of an upload token (a download token has none): each is refused in the other's place. */
const UPLOAD = 'upload';

const invalid = () => new ApiError('token_invalid', 'The signed URL is invalid or has expired; ask for a new one.');

/**
 * @example const signed = createSignedUrls({ sign: tokens.signObjectUrl, verify: tokens.verifyObjectUrl }, 'http://localhost:8080');
 */
export function createSignedUrls(tokens: UrlTokens, publicUrl: string): SignedUrls {
  const token = (object: SignedObject, expiresIn: number, transform?: ImageTransform | null) =>
    tokens.sign({ b: object.bucket, o: object.name, i: object.id, e: object.etag, ...(transform ? { t: transform } : {}) }, expiresIn);
  return {
    token,
    async sign(object, expiresIn) {
      return `${publicUrl}/api/v1/storage/sign/${encodeURIComponent(object.bucket)}/${encodePath(object.name)}?token=${await token(object, expiresIn)}`;
    },
    async verify(token, bucket, name) {
      const p = await tokens.verify(token);
      // Tokens without the object's id and ETag (made before they were bound) are refused too,
      // and so is an upload token (`k`): it names a path, not an object one may read.
      if (
        !p ||
        p.k !== undefined ||
        p.b !== bucket ||
        p.o !== name ||
        typeof p.exp !== 'number' ||
        typeof p.i !== 'string' ||
        typeof p.e !== 'string'
      ) {
        throw invalid();
      }
      const transform = p.t && typeof p.t === 'object' ? transformOf(p.t as Record<string, unknown>) : null;
      return { exp: p.exp, id: p.i, etag: p.e, transform };
    },
    signUpload(t, expiresIn) {
      return tokens.sign({ k: UPLOAD, b: t.bucket, o: t.name, w: t.owner, u: t.upsert, s: t.state }, expiresIn);
    },
    async verifyUpload(token, bucket, name) {
      const p = await tokens.verify(token);
      if (!p || p.k !== UPLOAD || p.b !== bucket || p.o !== name || typeof p.s !== 'string' || typeof p.u !== 'boolean') {
        throw invalid();
      }
      return { bucket, name, owner: typeof p.w === 'string' ? p.w : null, upsert: p.u, state: p.s };
    },
  };
}
