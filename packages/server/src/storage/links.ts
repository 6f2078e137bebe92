/**
 * The rules of links (docs/storage.md, "Signed and public URLs"), once, for every face that
 * serves them (/api/v1/storage's handlers/links.ts, /storage/v1 in supabase/storage/): who may
 * sign a URL, which object a signed URL still reads, what a public bucket serves, and signed
 * upload URLs (an upload to one name without a session, once).
 */
import type { RoleContext } from '../db/index.js';
import { ApiError, SERVICE } from '../http/index.js';
import type { BucketService } from './buckets.js';
import { objectName } from './names.js';
import { type ObjectService, type StoredObject, stateOf, type UploadInput } from './objects.js';
import type { SignedUrls } from './signed.js';
import type { ImageTransform } from './transform.js';

/** How long a signed upload URL lasts: two hours, as Supabase's. */
export const UPLOAD_URL_SECONDS = 7200;

const hidden = () => new ApiError('not_found', 'No such object (or it is not visible to you).');

/**
 * @example const links = createLinks(objects, buckets, signed); const found = await links.publicObject('site', 'index.html');
 */
export function createLinks(objects: ObjectService, buckets: BucketService, signed: SignedUrls) {
  return {
    /** The object `who` may read (SELECT policies), for a URL that reads it as it is now; 404 when hidden. */
    async signable(who: RoleContext, bucket: string, name: string): Promise<StoredObject> {
      const found = await objects.find(who, bucket, objectName(name));
      if (!found) throw hidden();
      return found;
    },

    /** A signed URL's token for what `who` may read (see `signable`). */
    async signToken(who: RoleContext, bucket: string, name: string, expiresIn: number, transform?: ImageTransform | null): Promise<string> {
      const found = await this.signable(who, bucket, name);
      return signed.token({ bucket, name: found.name, id: found.id, etag: found.etag }, expiresIn, transform);
    },

    /** What a signed URL reads: while the object it was signed for is still there, unchanged; else 404. */
    async signedObject(token: string, bucket: string, name: string): Promise<StoredObject> {
      return (await this.signedRead(token, bucket, name)).object;
    },

    /** `signedObject`, with the image transform the URL was signed with (null: the original). */
    async signedRead(token: string, bucket: string, name: string): Promise<{ object: StoredObject; transform: ImageTransform | null }> {
      const grant = await signed.verify(token, bucket, name);
      const found = await objects.find(SERVICE, bucket, name);
      if (!found || found.id !== grant.id || found.etag !== grant.etag) {
        throw new ApiError('not_found', 'The object this URL was signed for was deleted or replaced; ask for a new URL.');
      }
      return { object: found, transform: grant.transform };
    },

    /** An object of a public bucket; any other bucket, or a missing object, is 404. */
    async publicObject(bucket: string, name: string): Promise<StoredObject> {
      const b = await buckets.find(bucket);
      const found = b?.public ? await objects.find(SERVICE, bucket, name) : null;
      if (!found) throw new ApiError('not_found', 'No such object in a public bucket.');
      return found;
    },

    /**
     * A signed upload URL's token: made only for who may upload to the name now (their INSERT,
     * or upsert, run and undone), bound to the name's current state so it serves one upload.
     * The object it uploads is the signer's (`owner`).
     */
    async signUpload(who: RoleContext, bucket: string, name: string, upsert: boolean): Promise<{ token: string; name: string }> {
      const target = await objects.mayUpload(who, bucket, name, upsert);
      const state = stateOf(await objects.find(SERVICE, target.bucket, target.name));
      const owner = who.role === 'authenticated' ? (who.uid ?? null) : null;
      const token = await signed.signUpload({ ...target, owner, upsert, state }, UPLOAD_URL_SECONDS);
      return { token, name: target.name };
    },

    /**
     * The upload of a signed upload URL: the policies decided when it was signed; here the name
     * must be as it was then (a second upload through the URL is refused: 409 `object_exists`
     * without upsert, 400 `token_invalid` with), and the bucket's size and type limits apply as to
     * any upload. Written as the signer's object.
     */
    async uploadSigned(token: string, input: Omit<UploadInput, 'upsert'>) {
      const name = objectName(input.name);
      const grant = await signed.verifyUpload(token, input.bucket, name);
      const found = await objects.find(SERVICE, input.bucket, name);
      if (stateOf(found) !== grant.state) {
        if (!grant.upsert) throw new ApiError('object_exists', 'An object with this name already exists; this upload URL was used.');
        throw new ApiError(
          'token_invalid',
          'This upload URL was used already, or the object changed since it was signed; ask for a new one.',
        );
      }
      const signer: RoleContext = {
        role: 'service',
        claims: JSON.stringify(grant.owner ? { role: 'service', sub: grant.owner } : { role: 'service' }),
        uid: grant.owner,
      };
      // One upload, even of two at once: into an empty name a plain insert (the unique name lets
      // one through), over an object an upsert of that very upload only (a compare-and-swap).
      return found
        ? objects.upload(signer, { ...input, name, upsert: true, replaces: found.version })
        : objects.upload(signer, { ...input, name, upsert: false });
    },
  };
}

export type Links = ReturnType<typeof createLinks>;
