import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiFailure, whenSignedOut } from './lib/api';
import { createConsoleRouter } from './router';
import './styles.css';

const queryClient = new QueryClient({
  queryCache: new QueryCache(),
  defaultOptions: {
    queries: {
      // A refusal will not change by asking again; a network failure may, once.
      retry: (count, error) => error instanceof ApiFailure && error.unreachable && count < 1,
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});
const router = createConsoleRouter(queryClient);

// The session ended (logout elsewhere, 12 idle hours): to the login page, and back after it.
whenSignedOut(() => {
  const here = router.state.location;
  if (here.pathname === '/login' || here.pathname === '/setup' || here.pathname === '/invite') return;
  queryClient.clear();
  void router.navigate({ to: '/login', search: { next: here.href } });
});

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </StrictMode>,
  );
}
