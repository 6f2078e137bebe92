import { useCallback, useEffect, useRef, useState } from 'react';
import { Button } from '../../components/ui';
import type { ApiFailure } from '../../lib/api';
import { formatBytes, upload } from '../../lib/storage';

/** Files sent at once; the rest wait their turn. */
const PARALLEL = 3;

export interface UploadItem {
  id: number;
  bucket: string;
  /** The full object name: the folder it was dropped into, then the file's name. */
  name: string;
  file: File;
  status: 'queued' | 'uploading' | 'done' | 'failed';
  progress: number;
  error: { code: string; message: string } | null;
}

type Job = { id: number; bucket: string; name: string; file: File; upsert: boolean };

/**
 * The upload queue of the Storage page: every file gets its own row with progress and the
 * server's answer (an `object_exists` refusal can be retried as an overwrite, `x-upsert`).
 * `onUploaded` runs after each stored file (the listing refreshes).
 */
export function useUploads(onUploaded: (bucket: string) => void) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const queue = useRef<Job[]>([]);
  const active = useRef(0);
  const nextId = useRef(1);
  const aborts = useRef(new Map<number, AbortController>());
  const done = useRef(onUploaded);
  done.current = onUploaded;

  const patch = useCallback(
    (id: number, p: Partial<UploadItem>) => setItems((list) => list.map((i) => (i.id === id ? { ...i, ...p } : i))),
    [],
  );

  const pump = useCallback(() => {
    while (active.current < PARALLEL && queue.current.length) {
      const job = queue.current.shift() as Job;
      active.current++;
      const abort = new AbortController();
      aborts.current.set(job.id, abort);
      patch(job.id, { status: 'uploading', progress: 0, error: null });
      upload(job.bucket, job.name, job.file, {
        upsert: job.upsert,
        signal: abort.signal,
        onProgress: (f) => patch(job.id, { progress: f }),
      })
        .then(
          () => {
            patch(job.id, { status: 'done', progress: 1 });
            done.current(job.bucket);
          },
          (err: ApiFailure) => patch(job.id, { status: 'failed', error: { code: err.code, message: err.message } }),
        )
        .finally(() => {
          aborts.current.delete(job.id);
          active.current--;
          pump();
        });
    }
  }, [patch]);

  // Leaving the page cancels what is still being sent (nothing half-stored: the server keeps no partial file).
  useEffect(
    () => () => {
      for (const a of aborts.current.values()) a.abort();
    },
    [],
  );

  const enqueue = useCallback(
    (jobs: Job[]) => {
      queue.current.push(...jobs);
      pump();
    },
    [pump],
  );

  return {
    items,
    /** Queues files for `folder` ('' or `a/b/`) of `bucket`. */
    add(bucket: string, folder: string, files: File[]) {
      const jobs = files.map((file) => ({ id: nextId.current++, bucket, name: `${folder}${file.name}`, file, upsert: false }));
      setItems((list) => [
        ...list,
        ...jobs.map((j) => ({ id: j.id, bucket, name: j.name, file: j.file, status: 'queued' as const, progress: 0, error: null })),
      ]);
      enqueue(jobs);
    },
    /** Sends a refused file again, replacing the object of that name. */
    overwrite(item: UploadItem) {
      patch(item.id, { status: 'queued', error: null, progress: 0 });
      enqueue([{ id: item.id, bucket: item.bucket, name: item.name, file: item.file, upsert: true }]);
    },
    cancel(item: UploadItem) {
      aborts.current.get(item.id)?.abort();
      queue.current = queue.current.filter((j) => j.id !== item.id);
      if (item.status === 'queued') patch(item.id, { status: 'failed', error: { code: 'aborted', message: 'Upload cancelled.' } });
    },
    dismiss(item: UploadItem) {
      setItems((list) => list.filter((i) => i.id !== item.id));
    },
    clearFinished() {
      setItems((list) => list.filter((i) => i.status === 'queued' || i.status === 'uploading'));
    },
  };
}

type Uploads = ReturnType<typeof useUploads>;

function summary(items: UploadItem[]): string {
  const count = (s: UploadItem['status']) => items.filter((i) => i.status === s).length;
  const parts = [`${count('done')} of ${items.length} uploaded`];
  if (count('failed')) parts.push(`${count('failed')} refused`);
  if (count('uploading') + count('queued')) parts.push(`${count('uploading') + count('queued')} in progress`);
  return parts.join(', ');
}

/** The queue, one row per file: progress while it goes, then "Uploaded" or the server's refusal. */
export function UploadList({ uploads }: { uploads: Uploads }) {
  const { items } = uploads;
  if (!items.length) return null;
  return (
    <section aria-label="Uploads" className="rounded-lg border border-line bg-surface p-3">
      <div className="mb-2 flex items-center gap-2">
        <h2 className="text-sm font-semibold">Uploads</h2>
        <p role="status" className="text-sm text-fg-muted">
          {summary(items)}
        </p>
        <Button variant="ghost" className="ml-auto" onClick={uploads.clearFinished}>
          Clear finished
        </Button>
      </div>
      <ul className="divide-y divide-line">
        {items.map((item) => (
          <li key={item.id} aria-label={item.name} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-1.5 text-sm">
            <span className="min-w-0 flex-1 truncate font-mono text-xs" title={item.name}>
              {item.name}
            </span>
            <span className="text-xs text-fg-muted">{formatBytes(item.file.size)}</span>
            {item.status === 'uploading' || item.status === 'queued' ? (
              <>
                <progress
                  aria-label={`Progress of ${item.name}`}
                  value={item.status === 'queued' ? undefined : item.progress}
                  max={1}
                  className="h-2 w-32 accent-accent"
                />
                <span className="w-20 text-xs text-fg-muted" data-testid="upload-state">
                  {item.status === 'queued' ? 'Waiting' : `${Math.round(item.progress * 100)}%`}
                </span>
                <Button variant="ghost" aria-label={`Cancel ${item.name}`} onClick={() => uploads.cancel(item)}>
                  Cancel
                </Button>
              </>
            ) : item.status === 'done' ? (
              <span className="text-xs font-medium text-ok" data-testid="upload-state">
                Uploaded
              </span>
            ) : (
              <>
                <span className="basis-full text-xs text-danger sm:basis-auto" data-testid="upload-state">
                  Refused: {item.error?.message} <span className="text-fg-muted">({item.error?.code})</span>
                </span>
                {item.error?.code === 'object_exists' && (
                  <Button aria-label={`Overwrite ${item.name}`} onClick={() => uploads.overwrite(item)}>
                    Overwrite
                  </Button>
                )}
                <Button variant="ghost" aria-label={`Dismiss ${item.name}`} onClick={() => uploads.dismiss(item)}>
                  Dismiss
                </Button>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
