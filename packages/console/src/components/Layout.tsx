import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useRouter, useRouterState } from '@tanstack/react-router';
import { api } from '../lib/api';
import { meQuery, projectQuery } from '../lib/queries';
import { useRights } from '../lib/roles';
import { LogoMark } from './Logo';
import { Button, ErrorNotice, Notice } from './ui';

const NAV = [
  ['/', 'Overview'],
  ['/api', 'API'],
  ['/data', 'Table browser'],
  ['/storage', 'Storage'],
  ['/sql', 'SQL runner'],
  ['/auth', 'Auth settings'],
  ['/users', 'Users'],
  ['/messages', 'Messages'],
  ['/webhooks', 'Webhooks'],
  ['/functions', 'Functions'],
  // The third entry: the right of ROLE_RIGHTS a page needs (the others are every role's). Admin
  // is Team, Audit log and Backups (components/AdminTabs.tsx): the bar keeps one row at 1280 px.
  ['/team', 'Admin', 'manageAdmins'],
] as const;

/** Pages of the Admin entry: it is shown active on each. */
const ADMIN_PAGES = ['/team', '/audit', '/backups'];

/** The frame of every signed-in page: navigation, the admin, the origin banner. */
export function Layout() {
  const me = useQuery(meQuery);
  const rights = useRights();
  const project = useQuery(projectQuery);
  const router = useRouter();
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const queryClient = useQueryClient();
  const publicOrigin = project.data ? new URL(project.data.public_url).origin : null;

  async function signOut() {
    await api.logout().catch(() => undefined);
    queryClient.clear();
    await router.navigate({ to: '/login', search: {} });
  }

  return (
    <div className="min-h-screen">
      <header className="border-b border-line bg-surface">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-3 gap-y-2 px-4 py-2">
          <Link to="/" className="flex items-center gap-2 font-semibold" aria-label="Plinth: overview">
            <LogoMark />
            <span>Plinth{project.data ? ` · ${project.data.name}` : ''}</span>
          </Link>
          <nav aria-label="Console pages" className="flex flex-wrap gap-0.5">
            {NAV.filter((n) => n[2] === undefined || rights[n[2]]).map(([to, label]) => (
              <Link
                key={to}
                to={to}
                activeOptions={{ exact: to === '/', includeSearch: false }}
                data-admin={to === '/team' && ADMIN_PAGES.some((p) => pathname.endsWith(p)) ? 'active' : undefined}
                className="rounded-md px-2 py-1 text-sm text-fg-muted hover:bg-muted data-[admin=active]:bg-muted data-[admin=active]:text-fg data-[status=active]:bg-muted data-[status=active]:text-fg"
              >
                {label}
              </Link>
            ))}
          </nav>
          <div className="ml-auto flex items-center gap-2 text-sm">
            {/* The address only on wide screens: at 1280 px the bar keeps one row (the button's title has it). */}
            <span className="hidden text-fg-muted 2xl:inline">{me.data?.admin.email}</span>
            <Button onClick={signOut} title={me.data ? `Signed in as ${me.data.admin.email}` : undefined}>
              Sign out
            </Button>
          </div>
        </div>
      </header>
      <main className="mx-auto max-w-7xl space-y-4 px-4 py-5">
        {rights.role === 'viewer' && (
          <Notice kind="info">You are a viewer of this project: you read every page, and the server refuses any change you try.</Notice>
        )}
        {publicOrigin && publicOrigin !== window.location.origin && (
          <Notice kind="warn" title="This page's address differs from the server's PUBLIC_URL">
            You opened the console at {window.location.origin}, but the server believes it is {publicOrigin}: email links, OAuth callbacks
            and token issuers use {publicOrigin}. Open the console there, or set PUBLIC_URL to this address.
          </Notice>
        )}
        <Outlet />
      </main>
    </div>
  );
}

/** An error while opening a page (the API unreachable, most often): said plainly, with a retry. */
export function RouteError({ error, reset }: { error: unknown; reset: () => void }) {
  const router = useRouter();
  return (
    <main className="mx-auto max-w-xl p-8">
      <h1 className="mb-3 text-xl font-semibold">Plinth console</h1>
      <ErrorNotice
        error={error}
        retry={() => {
          reset();
          void router.invalidate();
        }}
      />
    </main>
  );
}

export function NotFound() {
  return (
    <main className="mx-auto max-w-xl p-8">
      <h1 className="mb-3 text-xl font-semibold">No such page</h1>
      <Link to="/" className="text-accent underline">
        Back to the overview
      </Link>
    </main>
  );
}
