import { type InfiniteData, type UseInfiniteQueryResult, useMutation } from '@tanstack/react-query';
import { Button, ErrorNotice, Loading, when } from '../../components/ui';
import { useRights } from '../../lib/roles';
import { downloadObject, type Entry, formatBytes } from '../../lib/storage';
import { hasThumbnail, Thumbnail } from './Thumbnail';

const TH = 'px-3 py-1.5 font-medium';

/** Drawn, not an emoji: not every system has an emoji font. */
function FolderIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" className="h-4 w-4 shrink-0 fill-current opacity-80">
      <path d="M1.5 3A1.5 1.5 0 0 1 3 1.5h3.3l1.6 1.8H13A1.5 1.5 0 0 1 14.5 4.8v7.7A1.5 1.5 0 0 1 13 14H3a1.5 1.5 0 0 1-1.5-1.5Z" />
    </svg>
  );
}
const TD = 'px-3 py-1.5';

/**
 * The entries of one folder page by page: folders first (they open), then files (a click opens
 * the details, a box selects them for deletion, a button downloads them under their own name:
 * fetched with the console's header and saved from a blob URL, never a link to the API URL).
 */
export function Listing(props: {
  bucket: string;
  folder: string;
  q: string;
  listing: UseInfiniteQueryResult<InfiniteData<Entry[], unknown>, Error>;
  entries: Entry[];
  selected: Set<string>;
  setSelected: (s: Set<string>) => void;
  open: string | undefined;
  onOpenFolder: (name: string) => void;
  onOpenFile: (name: string) => void;
}) {
  const { bucket, folder, q, listing, entries, selected, setSelected } = props;
  // A viewer has no upload: no hint to drop files.
  const { change } = useRights();
  const download = useMutation({ mutationFn: (f: { full: string; name: string }) => downloadObject(bucket, f.full, f.name) });
  const folders = entries.filter((e) => !e.id);
  const files = entries.filter((e) => e.id);
  const fullNames = files.map((f) => `${folder}${f.name}`);
  const allSelected = fullNames.length > 0 && fullNames.every((n) => selected.has(n));
  const toggle = (name: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(name);
    else next.delete(name);
    setSelected(next);
  };

  if (listing.isLoading) {
    return (
      <div className="p-4">
        <Loading label="Loading files" />
      </div>
    );
  }
  if (listing.error) {
    return (
      <div className="p-4">
        <ErrorNotice error={listing.error} retry={() => void listing.refetch()} />
      </div>
    );
  }
  if (!listing.data) return null;
  if (entries.length === 0) {
    return (
      <div
        className="m-3 flex min-h-40 flex-col items-center justify-center gap-1 rounded-md border-2 border-dashed border-line p-6 text-center text-sm"
        role="status"
      >
        <p className="font-medium">
          {q ? `Nothing in this folder matches “${q}”.` : folder ? 'This folder is empty.' : 'This bucket is empty.'}
        </p>
        {!q && change && <p className="text-fg-muted">Drop files here, or use “Upload files”, to upload into it.</p>}
      </div>
    );
  }

  return (
    <div>
      <table className="w-full text-left text-sm" aria-label={`Files in ${bucket}/${folder}`}>
        <thead className="bg-muted">
          <tr>
            <th scope="col" className={`${TH} w-8`}>
              <input
                type="checkbox"
                aria-label="Select every file shown"
                checked={allSelected}
                disabled={!files.length}
                onChange={(e) => setSelected(e.target.checked ? new Set([...selected, ...fullNames]) : new Set())}
              />
            </th>
            <th scope="col" className={TH}>
              Name
            </th>
            <th scope="col" className={`${TH} text-right`}>
              Size
            </th>
            <th scope="col" className={TH}>
              Type
            </th>
            <th scope="col" className={TH}>
              Updated
            </th>
            <th scope="col" className={TH}>
              <span className="sr-only">Download</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {folders.map((f) => (
            <tr key={`d:${f.name}`} className="border-t border-line hover:bg-muted/60">
              <td className={TD} />
              <td className={TD} colSpan={5}>
                <button
                  type="button"
                  className="flex items-center gap-1.5 text-left text-accent"
                  onClick={() => props.onOpenFolder(f.name)}
                >
                  <FolderIcon />
                  <span className="font-mono underline">{f.name}/</span>
                </button>
              </td>
            </tr>
          ))}
          {files.map((f) => {
            const full = `${folder}${f.name}`;
            return (
              <tr
                key={`f:${f.name}`}
                aria-selected={props.open === full}
                className="border-t border-line hover:bg-muted/60 aria-selected:bg-accent/10"
              >
                <td className={TD}>
                  <input
                    type="checkbox"
                    aria-label={`Select ${f.name}`}
                    checked={selected.has(full)}
                    onChange={(e) => toggle(full, e.target.checked)}
                  />
                </td>
                <td className={`${TD} max-w-0 w-1/2`}>
                  <span className="flex items-center gap-2">
                    {hasThumbnail(f.mime_type) && <Thumbnail bucket={bucket} name={full} />}
                    <button
                      type="button"
                      className="block min-w-0 max-w-full truncate text-left font-mono text-accent underline"
                      title={f.name}
                      onClick={() => props.onOpenFile(f.name)}
                    >
                      {f.name}
                    </button>
                  </span>
                </td>
                <td className={`${TD} whitespace-nowrap text-right tabular-nums`}>{formatBytes(f.size)}</td>
                <td className={`${TD} whitespace-nowrap font-mono text-xs text-fg-muted`}>{f.mime_type}</td>
                <td className={`${TD} whitespace-nowrap text-fg-muted`}>{when(f.updated_at)}</td>
                <td className={`${TD} text-right`}>
                  <button
                    type="button"
                    onClick={() => download.mutate({ full, name: f.name })}
                    aria-label={`Download ${f.name}`}
                    className="text-accent underline"
                  >
                    Download
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {download.error && (
        <div className="px-3 py-2">
          <ErrorNotice error={download.error} />
        </div>
      )}
      <div className="flex items-center gap-3 border-t border-line px-3 py-2 text-sm text-fg-muted">
        <span role="status">
          {folders.length} folder{folders.length === 1 ? '' : 's'}, {files.length} file{files.length === 1 ? '' : 's'}
          {listing.hasNextPage ? ' shown' : ''}
          {listing.isFetching && !listing.isFetchingNextPage ? ' (updating…)' : ''}
        </span>
        {listing.hasNextPage && (
          <Button onClick={() => void listing.fetchNextPage()} disabled={listing.isFetchingNextPage}>
            {listing.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </Button>
        )}
        {change && <span className="ml-auto text-xs">Drop files here to upload into this folder.</span>}
      </div>
    </div>
  );
}
