import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, CopyButton, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { ApiFailure, api, backupPath, fetchBlob, saveBlob } from '../../lib/api';
import { projectQuery } from '../../lib/queries';
import { useRights } from '../../lib/roles';
import { AdminTabs } from '../../components/AdminTabs';

/** Bytes in words (KiB, MiB, GiB). */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** docs/operations.md "PostgreSQL: pg_dump", the commands as written there. */
const PG_DUMP = `# While Plinth runs: the database with its owners and grants; and the disk backend's files.
pg_dump --format=custom --file=app.dump "$DATABASE_URL"
tar czf storage.tar.gz -C "$DATA_DIR" storage/objects      # STORAGE_BACKEND=disk only`;

/**
 * `/console/backups`: on the embedded database, make a backup now (`POST /api/v1/backups`),
 * the last five the server keeps, each downloadable; on PostgreSQL (`backups_unavailable`), how
 * to back it up with pg_dump (docs/operations.md "Backups"). Owners and admins: a backup holds
 * the keys.
 */
export function BackupsPage() {
  const rights = useRights();
  const project = useQuery(projectQuery);
  const embedded = project.data?.database === 'pglite';
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['backups'], queryFn: api.backups, enabled: rights.manageAdmins && embedded });
  // Fetched with the console's header, saved from a blob URL (a link would carry the cookie alone: refused).
  const download = useMutation({ mutationFn: async (name: string) => saveBlob(await fetchBlob(backupPath(name)), name) });
  const make = useMutation({
    mutationFn: api.makeBackup,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['backups'] }),
  });
  const unavailable = list.error instanceof ApiFailure && list.error.code === 'backups_unavailable';

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Backups</h1>
      {rights.manageAdmins && <AdminTabs />}
      {rights.role && !rights.manageAdmins ? (
        <Notice kind="info" title="Not available for your role">
          Only an owner or admin of the project makes and downloads backups (they hold the project's keys). You are a {rights.role}.
        </Notice>
      ) : project.isLoading ? (
        <Loading label="Reading the project" />
      ) : project.error ? (
        <ErrorNotice error={project.error} retry={() => void project.refetch()} />
      ) : embedded && !unavailable ? (
        <>
          <Card
            title="Embedded database"
            actions={
              <Button variant="primary" disabled={make.isPending || !rights.change} onClick={() => make.mutate()}>
                {make.isPending ? 'Making the backup…' : 'Make a backup now'}
              </Button>
            }
          >
            <p className="text-sm text-fg-muted">
              One <code>.tar.gz</code> file: the database (taken while the server serves), the project's keys and the files of the disk
              storage. The server keeps the last five. Restore one with <code>npx plinth restore &lt;file&gt;</code> into the stopped
              project. It holds the keys: keep it as you keep the data folder.
            </p>
            {make.error && (
              <div className="mt-2">
                <ErrorNotice error={make.error} />
              </div>
            )}
            {make.data && (
              <div className="mt-2">
                <Notice kind="ok">
                  Backup {make.data.name} made ({sizeText(make.data.size)}).
                </Notice>
              </div>
            )}
          </Card>
          <Card title="The last backups">
            {list.isLoading && <Loading label="Listing the backups" />}
            {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
            {download.error && <ErrorNotice error={download.error} />}
            {list.data?.length === 0 && <p className="text-sm text-fg-muted">No backup yet: make one above (or run npx plinth backup).</p>}
            {list.data && list.data.length > 0 && (
              <ul aria-label="Backups" className="divide-y divide-line rounded-md border border-line text-sm">
                {list.data.map((b) => (
                  <li key={b.name} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-2 py-1.5">
                    <code className="min-w-0 break-all">{b.name}</code>
                    <span className="text-fg-muted">{sizeText(b.size)}</span>
                    <span className="text-xs text-fg-muted">{when(b.created_at)}</span>
                    <button
                      type="button"
                      onClick={() => download.mutate(b.name)}
                      disabled={download.isPending}
                      className="ml-auto rounded-md border border-line px-3 py-1 font-medium hover:bg-muted"
                      aria-label={`Download ${b.name}`}
                    >
                      {download.isPending && download.variables === b.name ? 'Downloading…' : 'Download'}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </>
      ) : (
        <Card title="PostgreSQL: back up with pg_dump">
          <p className="text-sm">
            This project runs on PostgreSQL: Plinth does not copy it (the server answers <code>backups_unavailable</code>). Back it up with
            PostgreSQL's own tools, while Plinth runs:
          </p>
          <div className="mt-2 flex items-start gap-2">
            <pre
              data-testid="pg-dump"
              className="min-w-0 flex-1 overflow-x-auto rounded-md border border-line bg-muted p-3 font-mono text-xs"
            >
              {PG_DUMP}
            </pre>
            <CopyButton value={PG_DUMP} label="Copy the pg_dump commands" />
          </div>
          <p className="mt-2 text-sm text-fg-muted">
            A restore needs the roles the dump's objects belong to (the owner, <code>anon</code>, <code>authenticated</code>,{' '}
            <code>service</code>, <code>plinth_sql</code> and <code>plinth_api_&lt;database&gt;</code>) and two <code>pg_restore</code>{' '}
            passes: the steps are in docs/operations.md, "Backups". With <code>STORAGE_BACKEND=s3</code> the files stay in the bucket: back
            it up with its provider's tools.
          </p>
        </Card>
      )}
    </div>
  );
}
