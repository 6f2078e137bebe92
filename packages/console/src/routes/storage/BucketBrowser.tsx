import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, lazy, Suspense, useEffect, useRef, useState } from 'react';
import { Button, Confirm, ErrorNotice, Loading, Notice } from '../../components/ui';
import { useRights } from '../../lib/roles';
import type { StorageSearch } from '../../lib/search';
import { PAGE, storage } from '../../lib/storage';
import { Breadcrumbs } from './Breadcrumbs';
import { AccessBadge, bucketsQuery, limitText, typesText } from './Buckets';
import { CreateBucket } from './CreateBucket';
import { useFileDrop } from './drop';
import { Listing } from './Listing';
import { NewFolder } from './NewFolder';
import { ObjectDetails } from './ObjectDetails';
import { UploadList, useUploads } from './Uploads';

// The policy editor is its own chunk: most visits to a bucket are for its files.
const PolicyEditor = lazy(() => import('../../components/PolicyEditor').then((m) => ({ default: m.PolicyEditor })));

/** The columns of storage.objects a policy can use (docs/storage.md). */
const OBJECT_COLUMNS = ['name', 'owner', 'size', 'mime_type', 'bucket_id', 'id', 'created_at', 'updated_at'];

/** One bucket: breadcrumbs, search, folders and files page by page, uploads, details, deletes. */
export function BucketBrowser({ bucket }: { bucket: string }) {
  const search = useSearch({ strict: false }) as StorageSearch;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const prefix = search.prefix ?? '';
  const folder = prefix ? `${prefix}/` : '';
  const q = search.q ?? '';
  // A viewer browses, downloads and reads the policies only: no upload, folder, delete or settings (the server would refuse them).
  const { change } = useRights();
  const go = (s: StorageSearch) => void navigate({ to: '/storage/$bucket', params: { bucket }, search: s });

  const buckets = useQuery(bucketsQuery);
  const info = buckets.data?.find((b) => b.name === bucket);
  const listing = useInfiniteQuery({
    queryKey: ['storage', 'objects', bucket, folder, q],
    queryFn: ({ pageParam }) => storage.list(bucket, folder, q, pageParam),
    initialPageParam: 0,
    getNextPageParam: (last, all) => (last.length === PAGE ? all.length * PAGE : undefined),
    enabled: Boolean(info),
    staleTime: 0,
  });
  const entries = listing.data?.pages.flat() ?? [];
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['storage', 'objects', bucket] });
  const uploads = useUploads(() => void refresh());

  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  // biome-ignore lint/correctness/useExhaustiveDependencies: another folder or search starts a new selection
  useEffect(() => setSelected(new Set()), [folder, q]);
  const [deleting, setDeleting] = useState<string[] | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [newFolder, setNewFolder] = useState(false);
  const [editing, setEditing] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  const remove = useMutation({
    mutationFn: (names: string[]) => storage.remove(bucket, names),
    onMutate: () => setOutcome(null),
    onSuccess: async (gone, names) => {
      const n = gone.length;
      setOutcome(
        n === names.length
          ? `Deleted ${n} file${n === 1 ? '' : 's'}.`
          : `Deleted ${n} of ${names.length} files; the others were already gone.`,
      );
      setSelected(new Set());
      if (search.object && names.includes(search.object)) go({ ...search, object: undefined });
      await refresh();
    },
  });

  const submitSearch = (e: FormEvent) => {
    e.preventDefault();
    go({ prefix: prefix || undefined, q: text.trim() || undefined });
  };
  const addFiles = (files: File[]) => {
    if (files.length && change) uploads.add(bucket, folder, files);
  };

  const { zone, dragging } = useFileDrop(addFiles);

  const location = `${bucket}/${folder}`;
  const open = search.object;

  return (
    <div className="space-y-4">
      <Breadcrumbs bucket={bucket} prefix={prefix} />
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="font-mono text-2xl font-semibold">{bucket}</h1>
        {info && <AccessBadge isPublic={info.public} />}
        {info && (
          <span className="text-sm text-fg-muted">
            Size limit: {limitText(info)} · Allowed types: {typesText(info)}
          </span>
        )}
        {info && (
          <>
            {change && <Button onClick={() => setEditing(true)}>Bucket settings</Button>}
            <Button aria-pressed={Boolean(search.policies)} onClick={() => go({ ...search, policies: search.policies ? undefined : true })}>
              Policies
            </Button>
            <CreateBucket
              key={info.updated_at}
              editing={info}
              open={editing}
              onOpenChange={setEditing}
              onCreated={() => setOutcome('Bucket settings saved.')}
            />
          </>
        )}
      </div>
      {buckets.isLoading && <Loading label="Loading the bucket" />}
      {buckets.error && <ErrorNotice error={buckets.error} retry={() => void buckets.refetch()} />}
      {buckets.data && !info && (
        <Notice kind="error" title="No such bucket">
          There is no bucket “{bucket}”.{' '}
          <Link to="/storage" className="text-accent underline">
            See the buckets
          </Link>
          .
        </Notice>
      )}
      {info && search.policies && (
        <Suspense fallback={<Loading label="Loading the policy editor" />}>
          <PolicyEditor target={{ kind: 'bucket', bucket }} columns={OBJECT_COLUMNS} ownerGuess="owner" />
        </Suspense>
      )}
      {info && !search.policies && (
        <>
          <div className="flex flex-wrap items-center gap-2">
            {/* biome-ignore lint/a11y/useSemanticElements: a form with the search landmark role (<search> is still new) */}
            <form role="search" onSubmit={submitSearch} className="flex gap-2">
              <label className="sr-only" htmlFor="object-search">
                Search this folder
              </label>
              <input
                id="object-search"
                type="search"
                placeholder="Name contains…"
                value={text}
                onChange={(e) => setText(e.target.value)}
                className="w-64 rounded-md border border-line bg-surface px-2.5 py-1.5 text-sm"
              />
              <Button type="submit">Search</Button>
            </form>
            <span className="ml-auto" />
            {change && selected.size > 0 && (
              <Button variant="danger" onClick={() => setDeleting([...selected])}>
                Delete selected ({selected.size})
              </Button>
            )}
            {change && <Button onClick={() => setNewFolder(true)}>New folder</Button>}
            {change && (
              <Button variant="primary" onClick={() => picker.current?.click()}>
                Upload files
              </Button>
            )}
            <input
              ref={picker}
              type="file"
              multiple
              tabIndex={-1}
              aria-label="Choose files to upload"
              className="sr-only"
              onChange={(e) => {
                addFiles(Array.from(e.target.files ?? []));
                e.target.value = '';
              }}
            />
          </div>
          {outcome && <Notice kind="ok">{outcome}</Notice>}
          {remove.error && <ErrorNotice error={remove.error} />}
          <UploadList uploads={uploads} />
          <div className={open ? 'grid items-start gap-4 lg:grid-cols-[minmax(0,1fr)_26rem]' : ''}>
            <section
              aria-label={`Files in ${location}`}
              data-testid="drop-zone"
              data-dragging={dragging || undefined}
              {...(change ? zone : {})}
              className="relative min-h-48 overflow-x-auto rounded-lg border border-line bg-surface data-[dragging]:border-2 data-[dragging]:border-dashed data-[dragging]:border-accent"
            >
              {dragging && (
                <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center rounded-lg bg-surface text-sm font-medium text-accent">
                  Drop to upload into {location}
                </div>
              )}
              <Listing
                bucket={bucket}
                folder={folder}
                q={q}
                listing={listing}
                entries={entries}
                selected={selected}
                setSelected={setSelected}
                open={open}
                onOpenFolder={(name) => go({ prefix: `${folder}${name}` })}
                onOpenFile={(name) => go({ ...search, object: `${folder}${name}` })}
              />
            </section>
            {open && (
              <ObjectDetails
                key={open}
                bucket={info}
                name={open}
                entry={open.startsWith(folder) ? entries.find((e) => e.id && `${folder}${e.name}` === open) : undefined}
                onClose={() => go({ ...search, object: undefined })}
                onDelete={() => setDeleting([open])}
              />
            )}
          </div>
        </>
      )}
      <NewFolder open={newFolder} onOpenChange={setNewFolder} parent={location} onCreate={(name) => go({ prefix: `${folder}${name}` })} />
      <Confirm
        title={deleting?.length === 1 ? 'Delete this file?' : `Delete ${deleting?.length ?? 0} files?`}
        description={
          <>
            {(deleting ?? []).slice(0, 5).map((n) => (
              <span key={n} className="block truncate font-mono text-xs">
                {n}
              </span>
            ))}
            {(deleting?.length ?? 0) > 5 && <span className="block text-xs">… and {(deleting?.length ?? 0) - 5} more</span>}
            <span className="mt-2 block">This cannot be undone.</span>
          </>
        }
        confirm={deleting?.length === 1 ? 'Delete file' : 'Delete files'}
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
