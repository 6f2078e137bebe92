import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect } from '@tanstack/react-router';
import { Layout, NotFound, RouteError } from './components/Layout';
import { ApiFailure, basepath } from './lib/api';
import { meQuery } from './lib/queries';
import {
  apiSearch,
  auditSearch,
  authSearch,
  dataIndexSearch,
  dataSearch,
  inviteSearch,
  loginSearch,
  messagesSearch,
  oidcTestSearch,
  setupSearch,
  storageSearch,
  usersSearch,
  webhooksSearch,
} from './lib/search';
import { InvitePage } from './routes/invite/InvitePage';
import { LoginPage } from './routes/login/LoginPage';
import { SetupPage } from './routes/setup/SetupPage';

/**
 * The route tree: one route per page URL of docs/console.md, each page from its own routes/<page>/
 * folder (see routes/README.md). Every page but login and setup is its own lazy chunk.
 */

const root = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: Outlet,
  notFoundComponent: NotFound,
});

const login = createRoute({ getParentRoute: () => root, path: 'login', validateSearch: loginSearch, component: LoginPage });
const setup = createRoute({ getParentRoute: () => root, path: 'setup', validateSearch: setupSearch, component: SetupPage });
/** An invited admin's one-time link (the Team page makes it): outside the signed-in frame, as login and setup. */
const invite = createRoute({ getParentRoute: () => root, path: 'invite', validateSearch: inviteSearch, component: InvitePage });

/** Every page behind it needs an admin session: signed out, it leads to login and back. */
const app = createRoute({
  getParentRoute: () => root,
  id: 'app',
  beforeLoad: async ({ context, location }) => {
    try {
      await context.queryClient.ensureQueryData(meQuery);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) throw redirect({ to: '/login', search: { next: location.href } });
      throw err;
    }
  },
  component: Layout,
  errorComponent: RouteError,
});

const overview = createRoute({
  getParentRoute: () => app,
  path: '/',
  component: lazyRouteComponent(() => import('./routes/overview/OverviewPage'), 'OverviewPage'),
});
const sql = createRoute({
  getParentRoute: () => app,
  path: 'sql',
  component: lazyRouteComponent(() => import('./routes/sql/SqlPage'), 'SqlPage'),
});
const auth = createRoute({
  getParentRoute: () => app,
  path: 'auth',
  validateSearch: authSearch,
  component: lazyRouteComponent(() => import('./routes/auth/AuthPage'), 'AuthPage'),
});
/** Where a test sign-in of an OpenID Connect provider lands (the server's callback sends the browser here). */
const oidcTest = createRoute({
  getParentRoute: () => app,
  path: 'auth/oidc-test',
  validateSearch: oidcTestSearch,
  component: lazyRouteComponent(() => import('./routes/auth/OidcTestPage'), 'OidcTestPage'),
});
const users = createRoute({
  getParentRoute: () => app,
  path: 'users',
  validateSearch: usersSearch,
  component: lazyRouteComponent(() => import('./routes/users/UsersPage'), 'UsersPage'),
});
const messages = createRoute({
  getParentRoute: () => app,
  path: 'messages',
  validateSearch: messagesSearch,
  component: lazyRouteComponent(() => import('./routes/messages/MessagesPage'), 'MessagesPage'),
});
const webhooks = createRoute({
  getParentRoute: () => app,
  path: 'webhooks',
  validateSearch: webhooksSearch,
  component: lazyRouteComponent(() => import('./routes/webhooks/WebhooksPage'), 'WebhooksPage'),
});
const functions = createRoute({
  getParentRoute: () => app,
  path: 'functions',
  component: lazyRouteComponent(() => import('./routes/functions/FunctionsPage'), 'FunctionsPage'),
});

const apiIndex = createRoute({
  getParentRoute: () => app,
  path: 'api',
  validateSearch: apiSearch,
  component: lazyRouteComponent(() => import('./routes/api/ApiPage'), 'ApiPage'),
});
const apiTable = createRoute({
  getParentRoute: () => app,
  path: 'api/$table',
  validateSearch: apiSearch,
  component: lazyRouteComponent(() => import('./routes/api/ApiPage'), 'ApiPage'),
});
const dataIndex = createRoute({
  getParentRoute: () => app,
  path: 'data',
  validateSearch: dataIndexSearch,
  component: lazyRouteComponent(() => import('./routes/data/DataPage'), 'DataPage'),
});
const dataTable = createRoute({
  getParentRoute: () => app,
  path: 'data/$table',
  validateSearch: dataSearch,
  component: lazyRouteComponent(() => import('./routes/data/DataPage'), 'DataPage'),
});
const storageIndex = createRoute({
  getParentRoute: () => app,
  path: 'storage',
  component: lazyRouteComponent(() => import('./routes/storage/StoragePage'), 'StoragePage'),
});
const storageBucket = createRoute({
  getParentRoute: () => app,
  path: 'storage/$bucket',
  validateSearch: storageSearch,
  component: lazyRouteComponent(() => import('./routes/storage/StoragePage'), 'StoragePage'),
});

const team = createRoute({
  getParentRoute: () => app,
  path: 'team',
  component: lazyRouteComponent(() => import('./routes/team/TeamPage'), 'TeamPage'),
});
const audit = createRoute({
  getParentRoute: () => app,
  path: 'audit',
  validateSearch: auditSearch,
  component: lazyRouteComponent(() => import('./routes/audit/AuditPage'), 'AuditPage'),
});
const backups = createRoute({
  getParentRoute: () => app,
  path: 'backups',
  component: lazyRouteComponent(() => import('./routes/backups/BackupsPage'), 'BackupsPage'),
});

const tree = root.addChildren([
  login,
  setup,
  invite,
  app.addChildren([
    overview,
    sql,
    auth,
    oidcTest,
    users,
    messages,
    webhooks,
    functions,
    apiIndex,
    apiTable,
    dataIndex,
    dataTable,
    storageIndex,
    storageBucket,
    team,
    audit,
    backups,
  ]),
]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree: tree, basepath, context: { queryClient }, defaultPreload: false, scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
