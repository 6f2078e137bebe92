import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { LogoMark } from '../../components/Logo';
import { Button, ErrorNotice, Field } from '../../components/ui';
import { api } from '../../lib/api';

/** `/console/login`: email and password; back to the page that sent here afterwards. */
export function LoginPage() {
  const { next } = useSearch({ from: '/login' });
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useMutation({
    mutationFn: () => api.login(email, password),
    onSuccess: async (data) => {
      queryClient.setQueryData(['me'], data);
      // `next` is the router's own href of the page that sent here (validated as a local path).
      await navigate(next ? ({ href: next } as unknown as { to: '/' }) : { to: '/' });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate();
  };
  return (
    <main className="mx-auto mt-16 max-w-sm px-4">
      <LogoMark className="mb-3 h-10 w-10" />
      <h1 className="mb-1 text-2xl font-semibold">Plinth console</h1>
      <p className="mb-6 text-sm text-fg-muted">Sign in as a project admin.</p>
      <form onSubmit={submit} className="space-y-4">
        <Field label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {login.error && <ErrorNotice error={login.error} />}
        <Button type="submit" variant="primary" disabled={login.isPending} className="w-full justify-center">
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
      <p className="mt-6 text-xs text-fg-muted">
        No admin yet? Use the setup link the server printed at its first start, or{' '}
        <code>npx plinth admin create --email you@example.com</code>.
      </p>
    </main>
  );
}
