import type { AdminRole } from '@plinth/shared';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Card, CopyButton, ErrorNotice, Field, Loading, Notice, Select, when } from '../../components/ui';
import { type AdminInvite, ApiFailure, api } from '../../lib/api';
import { givableRoles, ROLE_WORDS, useRights } from '../../lib/roles';

/**
 * Invitations: an email and a role make a one-time link (7 days) that the server shows once,
 * here, to copy and send; the pending ones can be withdrawn (their link stops working).
 */
export function Invites() {
  const rights = useRights();
  const queryClient = useQueryClient();
  const pending = useQuery({ queryKey: ['invites'], queryFn: api.invites });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<AdminRole>('developer');
  const [made, setMade] = useState<AdminInvite | null>(null);
  const [revoked, setRevoked] = useState('');
  const invite = useMutation({
    mutationFn: () => api.invite(email, role),
    onSuccess: (i) => {
      setMade(i);
      setRevoked('');
      setEmail('');
      void queryClient.invalidateQueries({ queryKey: ['invites'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (i: AdminInvite) => api.revokeInvite(i.id),
    onSuccess: (i) => {
      setRevoked(`The invitation of ${i.email} is withdrawn: its link no longer works.`);
      if (made?.id === i.id) setMade(null);
      void queryClient.invalidateQueries({ queryKey: ['invites'] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    invite.mutate();
  };
  // The server's refusal of the address belongs under its field; any other refusal below the form.
  const fieldError =
    invite.error instanceof ApiFailure && (invite.error.code === 'invalid_email' || invite.error.code === 'admin_exists')
      ? invite.error.message
      : null;

  return (
    <Card title="Invitations">
      {rights.change && (
        <form onSubmit={submit} className="grid grid-cols-1 items-end gap-2 sm:grid-cols-[minmax(0,1fr)_16rem_auto]">
          <Field
            label="Email to invite"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={fieldError}
          />
          <Select
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value as AdminRole)}
            options={givableRoles(rights).map((r) => [r, ROLE_WORDS[r]] as const)}
          />
          <Button type="submit" variant="primary" disabled={invite.isPending}>
            {invite.isPending ? 'Inviting…' : 'Invite'}
          </Button>
        </form>
      )}
      {invite.error && !fieldError && (
        <div className="mt-2">
          <ErrorNotice error={invite.error} />
        </div>
      )}
      {made?.link && (
        <div className="mt-3">
          <Notice kind="ok" title={`Invitation link for ${made.email} (${made.role})`}>
            <p>
              Send this link to them yourself: it is shown only now, works once, and expires {when(made.expires_at)}. Opening it, they
              choose a password and are signed in.
            </p>
            <div className="mt-2 flex flex-wrap items-center gap-2">
              <code data-testid="invite-link" className="min-w-0 break-all rounded bg-muted px-1.5 py-0.5 text-xs">
                {made.link}
              </code>
              <CopyButton value={made.link} label="Copy the invitation link" />
              <Button variant="ghost" onClick={() => setMade(null)}>
                Done
              </Button>
            </div>
          </Notice>
        </div>
      )}
      {revoked && (
        <div className="mt-2">
          <Notice kind="ok">{revoked}</Notice>
        </div>
      )}
      {revoke.error && <ErrorNotice error={revoke.error} />}
      <h3 className="mb-1 mt-4 text-sm font-semibold">Pending</h3>
      {pending.isLoading && <Loading label="Loading the invitations" />}
      {pending.error && <ErrorNotice error={pending.error} retry={() => void pending.refetch()} />}
      {pending.data?.length === 0 && <p className="text-sm text-fg-muted">No pending invitation.</p>}
      {pending.data && pending.data.length > 0 && (
        <ul aria-label="Pending invitations" className="divide-y divide-line rounded-md border border-line text-sm">
          {pending.data.map((i) => (
            <li key={i.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-2 py-1.5">
              <span className="min-w-0 break-all font-medium">{i.email}</span>
              <span className="text-fg-muted">{i.role}</span>
              <span className="text-xs text-fg-muted">
                by {i.invited_by ?? 'the secret key'}, expires {when(i.expires_at)}
              </span>
              {rights.change && (rights.manageOwners || i.role !== 'owner') && (
                <Button
                  variant="ghost"
                  className="ml-auto"
                  aria-label={`Withdraw the invitation of ${i.email}`}
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate(i)}
                >
                  Withdraw
                </Button>
              )}
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
