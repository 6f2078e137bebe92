import { type QueryClient, queryOptions } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect } from '@tanstack/react-router';
import { Layout, NotFound, RouteError } from './components/Layout';
import { ApiFailure, api, basepath } from './lib/api';
import { authSearch, loginSearch, messagesSearch, setupSearch, usersSearch } from './lib/search';
import { LoginPage } from './routes/login/LoginPage';
import { SetupPage } from './routes/setup/SetupPage';

/**
 * The route tree: one route per page URL of API.md §6. Pages of part 2 (`/api`, `/api/$table`,
 * `/data/$table`, `/storage`) are added here as children of `app`, each from its own
 * routes/<page>/ folder (see routes/README.md).
 */

export const meQuery = queryOptions({ queryKey: ['me'], queryFn: api.me, staleTime: 60_000 });
export const projectQuery = queryOptions({ queryKey: ['project'], queryFn: api.project });

const root = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: Outlet,
  notFoundComponent: NotFound,
});

const login = createRoute({ getParentRoute: () => root, path: 'login', validateSearch: loginSearch, component: LoginPage });
const setup = createRoute({ getParentRoute: () => root, path: 'setup', validateSearch: setupSearch, component: SetupPage });

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

const tree = root.addChildren([login, setup, app.addChildren([overview, sql, auth, users, messages])]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree: tree, basepath, context: { queryClient }, defaultPreload: false, scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
