import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { Button, Card, CopyButton, ErrorNotice, Loading } from '../../components/ui';
import { serverUrl } from '../../lib/api';
import { keysQuery, projectQuery } from '../../lib/queries';

const PLANS = { free: 'Free', pro: 'Pro', team: 'Team', enterprise: 'Enterprise' } as const;

/**
 * `/console/`: what an app needs to connect. The secret key comes from GET /api/v1/admin/keys
 * into memory (TanStack Query's cache) only, shown masked until "Reveal".
 */
export function OverviewPage() {
  const project = useQuery(projectQuery);
  const keys = useQuery(keysQuery);
  const [revealed, setRevealed] = useState(false);

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Overview</h1>
      {(project.error || keys.error) && (
        <ErrorNotice error={project.error ?? keys.error} retry={() => void Promise.all([project.refetch(), keys.refetch()])} />
      )}
      <Card title="Connect your app">
        <dl className="grid grid-cols-[10rem_1fr] items-center gap-x-4 gap-y-3 text-sm">
          <dt className="text-fg-muted">Project URL</dt>
          <dd className="flex items-center gap-2">
            <code className="break-all" data-testid="project-url">
              {serverUrl}
            </code>
            <CopyButton value={serverUrl} label="Copy the project URL" />
          </dd>
          <dt className="text-fg-muted">Public key</dt>
          <dd className="flex items-center gap-2">
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
            {keys.data && (
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
        <p className="mt-3 text-xs text-fg-muted">
          <code>createClient(projectUrl, publicKey)</code> in the SDK; HTTP routes start with <code>/api/v1</code>. The public key is safe
          in browsers (row-level security applies). The secret key bypasses row-level security: server-side only.
        </p>
      </Card>
      <Card title="Project">
        {project.isLoading ? (
          <Loading label="Loading the project" />
        ) : project.data ? (
          <dl className="grid grid-cols-[10rem_1fr] gap-x-4 gap-y-2 text-sm">
            <dt className="text-fg-muted">Name</dt>
            <dd>{project.data.name}</dd>
            <dt className="text-fg-muted">Plan</dt>
            <dd>{PLANS[project.data.plan]}</dd>
            <dt className="text-fg-muted">Database</dt>
            <dd>{project.data.database === 'pglite' ? 'Embedded PostgreSQL (PGlite)' : 'PostgreSQL'}</dd>
            <dt className="text-fg-muted">Email delivery</dt>
            <dd>{project.data.email_delivery === 'smtp' ? 'SMTP' : 'Dev inbox (no SMTP_URL set)'}</dd>
            <dt className="text-fg-muted">Public URL</dt>
            <dd>
              <code>{project.data.public_url}</code>
            </dd>
          </dl>
        ) : null}
      </Card>
      <Card title="Pages">
        <ul className="grid gap-2 text-sm sm:grid-cols-2">
          {PAGES.map(([to, name, what]) => (
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
] as const;
