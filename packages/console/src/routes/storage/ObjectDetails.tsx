import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, CopyButton, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { projectQuery } from '../../lib/queries';
import { useRights } from '../../lib/roles';
import { type Bucket, downloadObject, type Entry, formatBytes, publicUrl, storage, useObjectPreview } from '../../lib/storage';
import { SELECT } from './CreateBucket';

export const EXPIRIES: Array<[string, number]> = [
  ['1 minute', 60],
  ['1 hour', 3600],
  ['1 day', 86_400],
  ['7 days', 604_800],
];

export const baseName = (name: string) => name.slice(name.lastIndexOf('/') + 1);
const folderOf = (name: string) => name.slice(0, name.lastIndexOf('/') + 1);

/**
 * One object: size, type, times, ETag, owner; a download under its own name, a signed URL with
 * a chosen lifetime (copied whole, absolute), the public URL of a public bucket, and delete.
 */
export function ObjectDetails(props: { bucket: Bucket; name: string; entry?: Entry; onClose: () => void; onDelete: () => void }) {
  const { bucket, name } = props;
  const file = baseName(name);
  const project = useQuery(projectQuery);
  // A viewer downloads only: signing a URL and deleting are changes the server refuses to the role.
  const { change } = useRights();
  // The listing's entry when it is loaded; otherwise (a bookmarked object) its folder is searched.
  const details = useQuery({
    queryKey: ['storage', 'object', bucket.name, name],
    queryFn: async () => (await storage.list(bucket.name, folderOf(name), file, 0, 1000)).find((e) => e.name === file && e.id) ?? null,
    initialData: props.entry,
    enabled: !props.entry,
  });
  const [expiry, setExpiry] = useState(3600);
  const [copied, setCopied] = useState<'copied' | 'failed' | null>(null);
  const sign = useMutation({
    mutationFn: async () => {
      setCopied(null);
      const url = await storage.sign(bucket.name, name, expiry);
      await navigator.clipboard.writeText(url).then(
        () => setCopied('copied'),
        () => setCopied('failed'),
      );
      return { url, until: Date.now() + expiry * 1000 };
    },
  });
  const e = props.entry ?? details.data;
  // Fetched with the header into a blob URL: an <img src> of the API URL would be refused (docs/security.md).
  const preview = useObjectPreview(bucket.name, name, Boolean(e?.mime_type?.startsWith('image/')));
  const download = useMutation({ mutationFn: () => downloadObject(bucket.name, name, file) });
  const base = project.data?.public_url ?? window.location.origin;

  return (
    <Card
      title={file}
      actions={
        <Button variant="ghost" aria-label="Close the details" onClick={props.onClose}>
          ✕
        </Button>
      }
    >
      {details.isLoading && <Loading label="Loading the object" />}
      {details.error && <ErrorNotice error={details.error} retry={() => void details.refetch()} />}
      {!details.isLoading && !details.error && !e && (
        <Notice kind="warn">No object “{name}” in this bucket (it may have been deleted).</Notice>
      )}
      {e && (
        <div className="space-y-4 text-sm">
          {e.mime_type?.startsWith('image/') && preview.url && (
            <img src={preview.url} alt={`Preview of ${file}`} className="max-h-48 rounded border border-line bg-muted object-contain" />
          )}
          {preview.error ? <ErrorNotice error={preview.error} /> : null}
          <dl aria-label="Object details" className="grid grid-cols-[6rem_1fr] gap-x-3 gap-y-1">
            <dt className="text-fg-muted">Name</dt>
            <dd className="break-all font-mono text-xs">{name}</dd>
            <dt className="text-fg-muted">Size</dt>
            <dd>
              {formatBytes(e.size)}
              {e.size !== null && e.size >= 1024 ? ` (${e.size.toLocaleString()} bytes)` : ''}
            </dd>
            <dt className="text-fg-muted">Type</dt>
            <dd className="font-mono text-xs">{e.mime_type}</dd>
            <dt className="text-fg-muted">Updated</dt>
            <dd>{when(e.updated_at)}</dd>
            <dt className="text-fg-muted">Created</dt>
            <dd>{when(e.created_at)}</dd>
            <dt className="text-fg-muted">ETag</dt>
            <dd className="break-all font-mono text-xs">{e.etag}</dd>
            <dt className="text-fg-muted">Owner</dt>
            {e.owner ? (
              <dd className="break-all font-mono text-xs">{e.owner}</dd>
            ) : (
              <dd className="text-fg-muted">None (uploaded with the secret key or from the console)</dd>
            )}
          </dl>
          <div className="flex flex-wrap gap-2">
            <Button onClick={() => download.mutate()} disabled={download.isPending}>
              {download.isPending ? 'Downloading…' : 'Download'}
            </Button>
            {change && (
              <Button variant="danger" onClick={props.onDelete}>
                Delete
              </Button>
            )}
          </div>
          {download.error && <ErrorNotice error={download.error} />}
          <section aria-label="Share with a signed URL" className="space-y-2 border-t border-line pt-3">
            <h3 className="font-semibold">Signed URL</h3>
            <p className="text-xs text-fg-muted">
              Reads this file without any key or header until it expires: for sharing or an &lt;img src&gt;.
            </p>
            <div className="flex flex-wrap items-center gap-2">
              <label className="flex items-center gap-1.5">
                <span>Expires in</span>
                <select
                  aria-label="Signed URL expiry"
                  value={expiry}
                  onChange={(ev) => setExpiry(Number(ev.target.value))}
                  className={SELECT}
                >
                  {EXPIRIES.map(([label, seconds]) => (
                    <option key={seconds} value={seconds}>
                      {label}
                    </option>
                  ))}
                </select>
              </label>
              <Button
                onClick={() => sign.mutate()}
                disabled={!change || sign.isPending}
                title={change ? undefined : 'Your role reads only: an owner, admin or developer signs URLs.'}
              >
                {copied === 'copied' && sign.data ? 'Copied' : 'Copy signed URL'}
              </Button>
            </div>
            {sign.error && <ErrorNotice error={sign.error} />}
            {sign.data && (
              <>
                <input
                  readOnly
                  aria-label="Signed URL"
                  value={sign.data.url}
                  onFocus={(ev) => ev.target.select()}
                  className="w-full rounded-md border border-line bg-muted px-2 py-1 font-mono text-xs"
                />
                <p role="status" className="text-xs text-fg-muted">
                  {copied === 'failed' ? 'The browser refused the clipboard: copy the URL above.' : 'Copied to the clipboard.'} Valid until{' '}
                  {new Date(sign.data.until).toLocaleString()}.
                </p>
              </>
            )}
          </section>
          {bucket.public && (
            <section aria-label="Share with the public URL" className="space-y-2 border-t border-line pt-3">
              <h3 className="font-semibold">Public URL</h3>
              <p className="text-xs text-fg-muted">This bucket is public: anyone with this URL reads the file, without a key.</p>
              <div className="flex items-center gap-2">
                <input
                  readOnly
                  aria-label="Public URL"
                  value={publicUrl(base, bucket.name, name)}
                  onFocus={(ev) => ev.target.select()}
                  className="min-w-0 flex-1 rounded-md border border-line bg-muted px-2 py-1 font-mono text-xs"
                />
                <CopyButton value={publicUrl(base, bucket.name, name)} label="Copy public URL" />
              </div>
            </section>
          )}
        </div>
      )}
    </Card>
  );
}
