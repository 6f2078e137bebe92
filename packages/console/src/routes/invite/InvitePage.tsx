import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { LogoMark } from '../../components/Logo';
import { Button, ErrorNotice, Field, Notice } from '../../components/ui';
import { ApiFailure, api } from '../../lib/api';

/**
 * `/console/invite?token=…`: the one-time link of an invitation (the Team page, docs/api.md
 * §4.1). The invited admin chooses a password and is signed in with the invited role. The
 * token stays in this page's URL, as the server wrote it, and is sent once.
 */
export function InvitePage() {
  const { token } = useSearch({ from: '/invite' });
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const mismatch = again !== '' && again !== password ? 'The two passwords differ.' : null;
  const accept = useMutation({
    mutationFn: () => api.acceptInvite(token ?? '', password),
    onSuccess: async (data) => {
      queryClient.clear();
      queryClient.setQueryData(['me'], data);
      await navigate({ to: '/' });
    },
  });
  const code = accept.error instanceof ApiFailure ? accept.error.code : null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!mismatch) accept.mutate();
  };
  return (
    <main className="mx-auto mt-16 max-w-sm px-4">
      <LogoMark className="mb-3 h-10 w-10" />
      <h1 className="mb-1 text-2xl font-semibold">Join the project</h1>
      <p className="mb-6 text-sm text-fg-muted">
        You were invited to this project's console. Choose your password: you are then signed in, with the role you were invited with.
      </p>
      {code === 'invite_invalid' ? (
        <Notice kind="error" title="This invitation link no longer works">
          <p>An invitation link works once, for 7 days, until it is withdrawn. Ask an owner or admin of the project for a new one.</p>
          <p className="mt-2">
            Used it already?{' '}
            <Link to="/login" search={{}} className="text-accent underline">
              Sign in
            </Link>
            .
          </p>
        </Notice>
      ) : code === 'admin_exists' ? (
        <Notice kind="error" title="You are an admin of this project already">
          <p>
            <Link to="/login" search={{}} className="text-accent underline">
              Sign in
            </Link>{' '}
            with your password instead.
          </p>
        </Notice>
      ) : !token ? (
        <Notice kind="error">This page needs the invitation link you were sent (…/console/invite?token=…).</Notice>
      ) : (
        <form onSubmit={submit} className="space-y-4">
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
          {accept.error && <ErrorNotice error={accept.error} />}
          <Button type="submit" variant="primary" disabled={accept.isPending} className="w-full justify-center">
            {accept.isPending ? 'Joining…' : 'Set password and sign in'}
          </Button>
        </form>
      )}
    </main>
  );
}
