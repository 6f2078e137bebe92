import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { Button, Confirm, EmptyState, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { useRights } from '../../lib/roles';
import { type Bucket, formatBytes, storage } from '../../lib/storage';
import { CreateBucket } from './CreateBucket';

/** Buckets and files change from apps and scripts too: every visit asks again (cached results show meanwhile). */
export const bucketsQuery = { queryKey: ['storage', 'buckets'], queryFn: storage.buckets, staleTime: 0 };

/** What a bucket accepts, in words. */
export const limitText = (b: Bucket) => (b.file_size_limit === null ? 'Server limit' : formatBytes(b.file_size_limit));
export const typesText = (b: Bucket) => (b.allowed_mime_types?.length ? b.allowed_mime_types.join(', ') : 'Any type');

export function AccessBadge({ isPublic }: { isPublic: boolean }) {
  return (
    <span
      className={`rounded-full border px-2 py-0.5 text-xs ${isPublic ? 'border-warn/50 bg-warn/10 text-warn' : 'border-line bg-muted text-fg-muted'}`}
    >
      {isPublic ? 'Public' : 'Private'}
    </span>
  );
}

/** `/console/storage`: every bucket, a new one, and the deletion of an empty one. */
export function Buckets() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const buckets = useQuery(bucketsQuery);
  // A viewer lists and opens buckets only: no new bucket, no delete (the server would refuse them).
  const { change } = useRights();
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: (name: string) => storage.deleteBucket(name),
    onMutate: () => setDeleted(null),
    onSuccess: async (b) => {
      setDeleted(b.name);
      await queryClient.invalidateQueries({ queryKey: ['storage', 'buckets'] });
    },
  });

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Storage</h1>
        {change && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New bucket
          </Button>
        )}
      </div>
      <p className="text-sm text-fg-muted">
        Files live in buckets; who may read or write them is decided by the row-level security policies on{' '}
        <code className="font-mono">storage.objects</code> (write them in the SQL runner). Here you act with the secret key's power.
      </p>
      {deleted && <Notice kind="ok">Bucket “{deleted}” deleted.</Notice>}
      {remove.error && <ErrorNotice error={remove.error} />}
      {buckets.error && <ErrorNotice error={buckets.error} retry={() => void buckets.refetch()} />}
      {buckets.isLoading && <Loading label="Loading buckets" />}
      {buckets.data && buckets.data.length === 0 && (
        <EmptyState title="No bucket yet">
          A bucket holds files, with its own size limit and allowed types. Create one with <strong>New bucket</strong>, upload into it, then
          open its <strong>Policies</strong> to say who may read and write its files.
        </EmptyState>
      )}
      {buckets.data && buckets.data.length > 0 && (
        <div className="overflow-auto rounded-md border border-line bg-surface">
          <table className="w-full text-left text-sm" aria-label="Buckets">
            <thead className="bg-muted">
              <tr>
                <th scope="col" className="px-3 py-1.5">
                  Name
                </th>
                <th scope="col" className="px-3 py-1.5">
                  Access
                </th>
                <th scope="col" className="px-3 py-1.5">
                  File size limit
                </th>
                <th scope="col" className="px-3 py-1.5">
                  Allowed types
                </th>
                <th scope="col" className="px-3 py-1.5">
                  Created
                </th>
                <th scope="col" className="px-3 py-1.5">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {buckets.data.map((b) => (
                <tr key={b.name} className="border-t border-line">
                  <td className="px-3 py-1.5">
                    <Link to="/storage/$bucket" params={{ bucket: b.name }} className="font-mono text-accent underline">
                      {b.name}
                    </Link>
                  </td>
                  <td className="px-3 py-1.5">
                    <AccessBadge isPublic={b.public} />
                  </td>
                  <td className="px-3 py-1.5">{limitText(b)}</td>
                  <td className="px-3 py-1.5 font-mono text-xs">{typesText(b)}</td>
                  <td className="px-3 py-1.5 text-fg-muted">{when(b.created_at)}</td>
                  <td className="px-3 py-1.5 text-right">
                    {change && (
                      <Button variant="ghost" aria-label={`Delete bucket ${b.name}`} onClick={() => setDeleting(b.name)}>
                        Delete
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateBucket
        open={creating}
        onOpenChange={setCreating}
        onCreated={(b) => void navigate({ to: '/storage/$bucket', params: { bucket: b.name } })}
      />
      <Confirm
        title={`Delete the bucket “${deleting ?? ''}”?`}
        description="Only an empty bucket can be deleted: delete its files first. This cannot be undone."
        confirm="Delete bucket"
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        onConfirm={() => {
          if (deleting) remove.mutate(deleting);
          setDeleting(null);
        }}
      />
    </div>
  );
}
