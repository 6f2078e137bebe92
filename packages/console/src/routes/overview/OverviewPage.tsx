import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { SiteUrlNote } from '../../components/SiteUrl';
import { Button, Card, CopyButton, ErrorNotice, Loading } from '../../components/ui';
import { serverUrl } from '../../lib/api';
import { keysQuery, projectQuery } from '../../lib/queries';
import { useRights } from '../../lib/roles';
import { bytesText, readCounts } from './counts';
import { SigningKey } from './SigningKey';

const PLANS = { free: 'Free', pro: 'Pro', team: 'Team', enterprise: 'Enterprise' } as const;

/** A JavaScript string literal in single quotes (the snippet's style). */
const js = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\n', '\\n')}'`;

/** The SDK code an app starts with: createClient with this project's URL and public key, and a first read. */
export function connectSnippet(url: string, publicKey: string, table: string | null): string {
  return [
    "import { createClient } from '@plinth/sdk';",
    '',
    '// The public key is safe in browsers: row-level security decides what each user reaches.',
    `const plinth = createClient(${js(url)}, ${js(publicKey)});`,
    '',
    table
      ? `const { data, error } = await plinth.from(${js(table)}).select();`
      : "// Make a table on the Table browser page, then: await plinth.from('your_table').select();",
  ].join('\n');
}

/**
 * `/console/`: the project at a glance (counts, each linking to its page) and what an app
 * needs to connect. The secret key comes from GET /api/v1/admin/keys
 * into memory (TanStack Query's cache) only, shown masked until "Reveal".
 */
export function OverviewPage() {
  const project = useQuery(projectQuery);
  const keys = useQuery(keysQuery);
  const rights = useRights();
  const [revealed, setRevealed] = useState(false);
  const counts = useQuery({ queryKey: ['overview-counts'], queryFn: readCounts, refetchInterval: 30_000 });
  const firstTable = counts.data?.firstTable ?? null;
  const snippet = keys.data ? connectSnippet(serverUrl, keys.data.public_key, firstTable) : null;
  const c = counts.data;
  const num = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toLocaleString());
  const tiles: Array<[string, string, string, string]> = [
    ['users', 'Users', num(c?.users), '/users'],
    ['tables', 'Tables', num(c?.tables), '/data'],
    [
      'storage',
      'Storage used',
      c?.storageBytes === null || c?.storageBytes === undefined
        ? '—'
        : `${bytesText(c.storageBytes)} · ${num(c.files)} file${c.files === 1 ? '' : 's'}`,
      '/storage',
    ],
    ['queued', 'Messages queued', num(c?.queued), '/messages'],
    ['failed', 'Messages failed', num(c?.failed), '/messages'],
    ['requests', 'Requests, last hour', num(c?.requestsLastHour), '/api'],
  ];

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Overview</h1>
      {(project.error || keys.error) && (
        <ErrorNotice error={project.error ?? keys.error} retry={() => void Promise.all([project.refetch(), keys.refetch()])} />
      )}
      <section aria-label="Counts" className="grid grid-cols-2 gap-2 sm:grid-cols-3 lg:grid-cols-6">
        {tiles.map(([id, label, value, to]) => (
          <Link key={id} to={to} className="rounded-lg border border-line bg-surface px-3 py-2 hover:bg-muted">
            <span className="block text-xs text-fg-muted">{label}</span>
            <span className="block text-lg font-semibold tabular-nums" data-testid={`count-${id}`}>
              {counts.isLoading ? '…' : value}
            </span>
          </Link>
        ))}
      </section>
      <Card title="Connect your app">
        <dl className="grid grid-cols-1 items-center gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_minmax(0,1fr)] sm:gap-y-3">
          <dt className="text-fg-muted">Project URL</dt>
          <dd className="flex min-w-0 items-center gap-2">
            <code className="break-all" data-testid="project-url">
              {serverUrl}
            </code>
            <CopyButton value={serverUrl} label="Copy the project URL" />
          </dd>
          <dt className="text-fg-muted">Public key</dt>
          <dd className="flex min-w-0 items-center gap-2">
            {keys.isLoading ? (
              <Loading label="Loading the keys" />
            ) : keys.data ? (
              <>
                <code className="break-all" data-testid="public-key">
                  {keys.data.public_key}
                </code>
                <CopyButton value={keys.data.public_key} label="Copy the public key" />
              </>
            ) : null}
          </dd>
          <dt className="text-fg-muted">Secret key</dt>
          <dd className="flex flex-wrap items-center gap-2">
            {keys.data && keys.data.secret_key === null && (
              <span className="text-fg-muted" data-testid="secret-key-unavailable">
                Not available for your role
              </span>
            )}
            {keys.data?.secret_key && (
              <>
                <code className="break-all">{revealed ? keys.data.secret_key : `sk_${'•'.repeat(24)}`}</code>
                <Button onClick={() => setRevealed(!revealed)} aria-pressed={revealed}>
                  {revealed ? 'Hide' : 'Reveal'}
                </Button>
                {revealed && <CopyButton value={keys.data.secret_key} label="Copy the secret key" />}
              </>
            )}
          </dd>
        </dl>
        {snippet && (
          <div className="mt-4 space-y-2">
            <div className="flex flex-wrap items-center justify-between gap-2">
              <p className="min-w-0 break-words text-sm font-medium">
                In your app: <code>@plinth/sdk</code> (installed from the repository, see its README), or in a page without a build step{' '}
                <code>
                  import {'{ createClient }'} from '{serverUrl}/sdk/plinth.js'
                </code>
              </p>
              <CopyButton value={snippet} label="Copy the SDK snippet" />
            </div>
            <pre
              data-testid="connect-snippet"
              className="overflow-x-auto whitespace-pre rounded-md border border-line bg-muted p-3 font-mono text-xs"
            >
              {snippet}
            </pre>
          </div>
        )}
        <p className="mt-3 text-xs text-fg-muted">
          <code>createClient(projectUrl, publicKey)</code> in the SDK; HTTP routes start with <code>/api/v1</code>. The public key is safe
          in browsers (row-level security applies). The secret key bypasses row-level security: server-side only.
        </p>
      </Card>
      {rights.manageAdmins && <SigningKey />}
      <Card title="Project">
        {project.isLoading ? (
          <Loading label="Loading the project" />
        ) : project.data ? (
          <dl className="grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_minmax(0,1fr)] sm:gap-y-2">
            <dt className="text-fg-muted">Name</dt>
            <dd>{project.data.name}</dd>
            <dt className="text-fg-muted">Plan</dt>
            <dd>{PLANS[project.data.plan]}</dd>
            <dt className="text-fg-muted">Database</dt>
            <dd>{project.data.database === 'pglite' ? 'Embedded PostgreSQL (PGlite)' : 'PostgreSQL'}</dd>
            <dt className="text-fg-muted">Email delivery</dt>
            <dd>{project.data.email_delivery === 'smtp' ? 'SMTP' : 'Dev inbox (no SMTP_URL set)'}</dd>
            <dt className="text-fg-muted">Site URL</dt>
            <dd className="space-y-1">
              <code>{project.data.public_url}</code>
              <SiteUrlNote url={project.data.public_url} />
            </dd>
          </dl>
        ) : null}
      </Card>
      <Card title="Pages">
        <ul className="grid gap-2 text-sm sm:grid-cols-2">
          {PAGES.filter((p) => p[3] === undefined || rights[p[3]]).map(([to, name, what]) => (
            <li key={to}>
              <Link to={to} className="text-accent underline">
                {name}
              </Link>{' '}
              — {what}
            </li>
          ))}
        </ul>
      </Card>
    </div>
  );
}

/** The other pages, as the overview links them (the top bar has them too). */
const PAGES = [
  ['/api', 'API', 'every endpoint: try it, cURL and SDK snippets'],
  ['/data', 'Table browser', 'rows of any table: filter, edit, insert, delete'],
  ['/storage', 'Storage', 'buckets and files: upload, download, signed URLs'],
  ['/sql', 'SQL runner', 'tables, policies, queries'],
  ['/auth', 'Auth settings', 'sign-in methods, URLs, providers, emails'],
  ['/users', 'Users', 'find, ban, sign out, delete'],
  ['/messages', 'Messages', 'dev inbox and delivery log'],
  ['/webhooks', 'Webhooks', 'changes of your tables POSTed to your endpoints, with their delivery log'],
  ['/functions', 'Functions', 'your server code: recent calls, deployed versions, schedules, secrets'],
  // The fourth entry: the right of ROLE_RIGHTS the page needs, as in the top bar.
  ['/team', 'Admin', 'the team and its roles, invitations, the audit log, backups', 'manageAdmins'],
] as const;
