import { useParams } from '@tanstack/react-router';
import { BucketBrowser } from './BucketBrowser';
import { Buckets } from './Buckets';

/**
 * `/console/storage` (the buckets) and `/console/storage/{bucket}?prefix=&q=&object=` (one
 * bucket's folders and files, uploads by drag and drop or the file picker, downloads, signed
 * and public URLs, deletes). Every call goes with the admin cookie, which the storage routes
 * take as the secret key (RLS bypassed), under the CSRF rule of docs/api.md §4.1.
 */
export function StoragePage() {
  const { bucket } = useParams({ strict: false }) as { bucket?: string };
  return bucket ? <BucketBrowser key={bucket} bucket={bucket} /> : <Buckets />;
}
