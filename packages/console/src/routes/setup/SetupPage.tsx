import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { LogoMark } from '../../components/Logo';
import { Button, ErrorNotice, Field, Loading, Notice } from '../../components/ui';
import { ApiFailure, api } from '../../lib/api';

/** `/console/setup?token=…`: the first admin, from the one-time link printed at the first start. */
export function SetupPage() {
  const { token } = useSearch({ from: '/setup' });
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const mismatch = again !== '' && again !== password ? 'The two passwords differ.' : null;
  const setup = useMutation({
    mutationFn: () => api.setup(token ?? '', email, password),
    onSuccess: async (data) => {
      queryClient.setQueryData(['me'], data);
      await navigate({ to: '/' });
    },
  });
  // Asked as the page opens (the link is not used by asking), so a used link says so before any typing.
  const check = useQuery({
    queryKey: ['setup-check', token],
    queryFn: () => api.setupCheck(token ?? ''),
    enabled: Boolean(token),
    staleTime: Number.POSITIVE_INFINITY,
  });
  const used = check.data?.usable === false || (setup.error instanceof ApiFailure && setup.error.code === 'setup_link_invalid');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!mismatch) setup.mutate();
  };
  return (
    <main className="mx-auto mt-16 max-w-sm px-4">
      <LogoMark className="mb-3 h-10 w-10" />
      <h1 className="mb-1 text-2xl font-semibold">Create the first admin</h1>
      <p className="mb-6 text-sm text-fg-muted">
        This link works once and for one hour. The admin signs in to this console; it is not an end-user.
      </p>
      {used ? (
        <Notice kind="error" title="This setup link is used (or expired)">
          <p>A setup link makes one admin, once, within an hour of the start that printed it. To get an admin now:</p>
          <ul className="mt-2 list-disc space-y-1 pl-5">
            <li>
              You have one already?{' '}
              <Link to="/login" search={{}} className="text-accent underline">
                Sign in
              </Link>
              .
            </li>
            <li>
              Run <code className="break-all">npx plinth admin create --email you@example.com</code> on the server (it asks for the
              password; with the embedded database, stop the server first).
            </li>
            <li>With no admin at all, restart the server: it prints a new setup link.</li>
          </ul>
        </Notice>
      ) : !token ? (
        <Notice kind="error">This page needs the setup link the server printed (…/console/setup?token=…).</Notice>
      ) : check.isLoading ? (
        <Loading label="Checking the setup link" />
      ) : (
        <form onSubmit={submit} className="space-y-4">
          <Field label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <Field
            label="Password"
            type="password"
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={128}
            hint="12 to 128 characters."
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <Field
            label="Repeat the password"
            type="password"
            autoComplete="new-password"
            required
            value={again}
            error={mismatch}
            onChange={(e) => setAgain(e.target.value)}
          />
          {setup.error && !used && <ErrorNotice error={setup.error} />}
          <Button type="submit" variant="primary" disabled={setup.isPending} className="w-full justify-center">
            {setup.isPending ? 'Creating…' : 'Create admin and sign in'}
          </Button>
        </form>
      )}
    </main>
  );
}
