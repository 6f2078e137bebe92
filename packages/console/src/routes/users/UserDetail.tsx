import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, Confirm, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { useRights } from '../../lib/roles';
import { api } from '../../lib/api';
import { status } from './UsersPage';

const BANS: Array<[string, number | null]> = [
  ['1 day', 86_400_000],
  ['7 days', 7 * 86_400_000],
  ['30 days', 30 * 86_400_000],
  ['indefinitely', null],
];
const FOREVER = '9999-12-31T23:59:59Z';

/** One user: identities, open sessions (agent, IP, times) and every action of docs/api.md §4.2. */
export function UserDetail({ id, onClosed }: { id: string; onClosed: () => void }) {
  const queryClient = useQueryClient();
  const user = useQuery({ queryKey: ['user', id], queryFn: () => api.user(id) });
  const factors = useQuery({ queryKey: ['user', id, 'factors'], queryFn: () => api.userFactors(id) });
  // A viewer reads the user only: no ban, sign-out, delete, factor or passkey removal (the server would refuse them).
  const { change } = useRights();
  const [confirmReset, setConfirmReset] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [ban, setBan] = useState('1 day');
  const [done, setDone] = useState<string | null>(null);
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: ['user', id] });
    await queryClient.invalidateQueries({ queryKey: ['users'] });
    await queryClient.invalidateQueries({ queryKey: ['user', id, 'factors'] });
  };
  const act = useMutation({
    mutationFn: async (action: () => Promise<string>) => action(),
    onSuccess: async (message) => {
      setDone(message);
      await refresh();
    },
    onMutate: () => setDone(null),
  });

  if (user.isLoading) return <Loading label="Loading the user" />;
  if (user.error) return <ErrorNotice error={user.error} retry={() => void user.refetch()} />;
  const u = user.data;
  if (!u) return null;
  const banned = status(u) === 'Banned';

  return (
    <Card
      title={u.email ?? u.phone ?? u.id}
      actions={
        <Button variant="ghost" aria-label="Close the user" onClick={onClosed}>
          ✕
        </Button>
      }
    >
      <div className="space-y-4 text-sm">
        <dl className="grid grid-cols-[8rem_1fr] gap-x-3 gap-y-1">
          <dt className="text-fg-muted">Status</dt>
          <dd>
            {status(u)}
            {banned && u.banned_until ? ` until ${u.banned_until.startsWith('9999') ? 'lifted' : when(u.banned_until)}` : ''}
          </dd>
          <dt className="text-fg-muted">Id</dt>
          <dd className="break-all font-mono text-xs">{u.id}</dd>
          <dt className="text-fg-muted">Email</dt>
          <dd>
            {u.email ?? '—'} {u.email && (u.email_confirmed_at ? '(confirmed)' : '(unconfirmed)')}
          </dd>
          <dt className="text-fg-muted">Phone</dt>
          <dd>{u.phone ?? '—'}</dd>
          <dt className="text-fg-muted">Created</dt>
          <dd>{when(u.created_at)}</dd>
          <dt className="text-fg-muted">Last sign-in</dt>
          <dd>{when(u.last_sign_in_at)}</dd>
        </dl>
        <section aria-label="Identities">
          <h3 className="mb-1 font-semibold">Identities</h3>
          {u.identities.length ? (
            <ul className="list-disc pl-5">
              {u.identities.map((i) => (
                <li key={`${i.provider}-${i.created_at}`}>
                  {i.provider}
                  {i.email ? ` · ${i.email}` : ''} · {when(i.created_at)}
                </li>
              ))}
            </ul>
          ) : (
            <p className="text-fg-muted">None.</p>
          )}
        </section>
        <section aria-label="Sessions">
          <h3 className="mb-1 font-semibold">Open sessions ({u.sessions.length})</h3>
          <ul className="space-y-1">
            {u.sessions.map((s) => (
              <li key={s.id} className="rounded border border-line p-1.5 text-xs">
                <div className="truncate">{s.user_agent ?? 'unknown agent'}</div>
                <div className="text-fg-muted">
                  {s.ip ?? '?'} · started {when(s.created_at)} · last refresh {when(s.refreshed_at)}
                </div>
              </li>
            ))}
          </ul>
        </section>
        <section aria-label="Second factors and passkeys">
          <h3 className="mb-1 font-semibold">Second factors and passkeys</h3>
          {factors.error && <ErrorNotice error={factors.error} retry={() => void factors.refetch()} />}
          {factors.data && (
            <>
              {factors.data.factors.length === 0 && factors.data.passkeys.length === 0 && (
                <p className="text-fg-muted">None: a password (or link, code, provider) alone signs this user in.</p>
              )}
              <ul className="space-y-1">
                {factors.data.factors.map((f) => (
                  <li key={f.id} className="rounded border border-line p-1.5 text-xs">
                    Authenticator app{f.friendly_name ? ` “${f.friendly_name}”` : ''} · {f.status} · added {when(f.created_at)}
                  </li>
                ))}
                {factors.data.passkeys.map((k) => (
                  <li key={k.id} className="flex items-center gap-2 rounded border border-line p-1.5 text-xs">
                    <span className="mr-auto">
                      Passkey “{k.name}”{k.backed_up ? ' (synced)' : ''} · added {when(k.created_at)} · last used {when(k.last_used_at)}
                    </span>
                    {change && (
                      <Button
                        onClick={() =>
                          act.mutate(async () => {
                            await api.removeUserPasskey(u.id, k.id);
                            return `Passkey “${k.name}” removed: it signs no one in any more.`;
                          })
                        }
                      >
                        Remove
                      </Button>
                    )}
                  </li>
                ))}
              </ul>
              {change && factors.data.factors.length > 0 && (
                <Button className="mt-2" variant="danger" onClick={() => setConfirmReset(true)}>
                  Reset second factors
                </Button>
              )}
            </>
          )}
        </section>
        {done && <Notice kind="ok">{done}</Notice>}
        {act.error && <ErrorNotice error={act.error} />}
        {change && (
          <div className="flex flex-wrap gap-2">
            {u.email && !u.email_confirmed_at && (
              <>
                <Button
                  onClick={() =>
                    act.mutate(async () => {
                      await api.updateUser(u.id, { email_confirmed: true });
                      return 'Email confirmed.';
                    })
                  }
                >
                  Confirm email
                </Button>
                <Button onClick={() => act.mutate(async () => `Verification email sent to ${(await api.resendVerification(u.id)).to}.`)}>
                  Resend verification
                </Button>
              </>
            )}
            <Button
              disabled={!u.sessions.length}
              onClick={() => act.mutate(async () => `Signed out of ${(await api.signOutUser(u.id)).revoked} session(s).`)}
            >
              Sign out everywhere
            </Button>
          </div>
        )}
        {change && (
          <div className="flex flex-wrap items-end gap-2 border-t border-line pt-3">
            {banned ? (
              <Button
                onClick={() =>
                  act.mutate(async () => {
                    await api.updateUser(u.id, { banned_until: null });
                    return 'Ban lifted.';
                  })
                }
              >
                Lift the ban
              </Button>
            ) : (
              <>
                <div className="flex flex-col gap-1 text-sm">
                  <label htmlFor="ban-for">Ban for</label>
                  <select
                    id="ban-for"
                    value={ban}
                    onChange={(e) => setBan(e.target.value)}
                    className="rounded-md border border-line bg-surface px-2 py-1.5"
                  >
                    {BANS.map(([label]) => (
                      <option key={label}>{label}</option>
                    ))}
                  </select>
                </div>
                <Button
                  onClick={() =>
                    act.mutate(async () => {
                      const ms = BANS.find(([l]) => l === ban)?.[1];
                      await api.updateUser(u.id, { banned_until: ms ? new Date(Date.now() + ms).toISOString() : FOREVER });
                      return `Banned ${ban}: sign-in and refresh are refused.`;
                    })
                  }
                >
                  Ban user
                </Button>
              </>
            )}
            <Button variant="danger" className="ml-auto" onClick={() => setConfirmDelete(true)}>
              Delete user
            </Button>
          </div>
        )}
      </div>
      <Confirm
        open={confirmReset}
        onOpenChange={setConfirmReset}
        title="Reset this user's second factors?"
        description={`Every authenticator app and recovery code of ${u.email ?? u.phone ?? u.id} goes, and their sessions drop to one factor at once: a password alone signs them in again. Do this only for the account's owner, checked by other means (docs/security.md).`}
        confirm="Reset second factors"
        onConfirm={() => {
          setConfirmReset(false);
          act.mutate(async () => `Second factors reset: ${(await api.resetFactors(u.id)).removed} removed.`);
        }}
      />
      <Confirm
        open={confirmDelete}
        onOpenChange={setConfirmDelete}
        title="Delete this user?"
        description={`${u.email ?? u.phone ?? u.id} is deleted with its sessions, identities and pending links. Rows of your tables that point at it follow their foreign keys. This cannot be undone.`}
        confirm="Delete permanently"
        onConfirm={async () => {
          setConfirmDelete(false);
          await api.deleteUser(u.id);
          await queryClient.invalidateQueries({ queryKey: ['users'] });
          onClosed();
        }}
      />
    </Card>
  );
}
