import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { Button, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { api, type EndUser } from '../../lib/api';
import { useRights } from '../../lib/roles';
import { CreateUser } from './CreateUser';
import { UserDetail } from './UserDetail';

const PAGE = 25;

/** A user's state in a word or two. */
export function status(u: Pick<EndUser, 'banned_until' | 'email' | 'email_confirmed_at'>): string {
  if (u.banned_until && Date.parse(u.banned_until) > Date.now()) return 'Banned';
  if (u.email && !u.email_confirmed_at) return 'Unconfirmed';
  return 'Active';
}

/** `/console/users`: server-side search by email or phone, pages of 25, a detail panel per user. */
export function UsersPage() {
  const { q = '', page = 1, user } = useSearch({ from: '/app/users' });
  const navigate = useNavigate({ from: '/users' });
  const [search, setSearch] = useState(q);
  const [creating, setCreating] = useState(false);
  // A viewer lists and opens users only (the server refuses every change to the role).
  const { change } = useRights();
  useEffect(() => setSearch(q), [q]);
  const list = useQuery({
    queryKey: ['users', q, page],
    queryFn: () => api.users(q, PAGE, (page - 1) * PAGE),
    placeholderData: keepPreviousData,
  });
  const total = list.data?.total ?? 0;
  const first = total ? (page - 1) * PAGE + 1 : 0;
  const last = Math.min(total, page * PAGE);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void navigate({ search: { q: search.trim() || undefined, page: undefined, user } });
  };

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Users</h1>
        {change && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create user
          </Button>
        )}
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: a form with the search landmark role (<search> is still new) */}
      <form role="search" onSubmit={submit} className="flex gap-2">
        <label className="sr-only" htmlFor="user-search">
          Search users by email or phone
        </label>
        <input
          id="user-search"
          type="search"
          placeholder="Email or phone contains…"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          className="w-80 rounded-md border border-line bg-surface px-2.5 py-1.5 text-sm"
        />
        <Button type="submit">Search</Button>
      </form>
      {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
      {list.isLoading && <Loading label="Loading users" />}
      {list.data && (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-[minmax(0,1fr)_26rem]">
          <div className="space-y-2">
            <p role="status" className="text-sm text-fg-muted">
              {total === 0
                ? q
                  ? `No user matches "${q}".`
                  : 'No users yet: add one with Create user, or let your app sign users up (the API page tries sign-up too).'
                : `${first}–${last} of ${total} users${q ? ` matching "${q}"` : ''}`}
              {list.isFetching && !list.isLoading ? ' (updating…)' : ''}
            </p>
            {total > 0 && (
              <div className="overflow-auto rounded-md border border-line">
                <table className="w-full text-left text-sm" aria-label="Users">
                  <thead className="bg-muted">
                    <tr>
                      <th scope="col" className="px-2 py-1">
                        Email / phone
                      </th>
                      <th scope="col" className="px-2 py-1">
                        Status
                      </th>
                      <th scope="col" className="px-2 py-1">
                        MFA
                      </th>
                      <th scope="col" className="px-2 py-1">
                        Created
                      </th>
                      <th scope="col" className="px-2 py-1">
                        Last sign-in
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.users.map((u) => (
                      <tr key={u.id} aria-selected={u.id === user} className="border-t border-line aria-selected:bg-accent/10">
                        <td className="px-2 py-1">
                          <button
                            type="button"
                            className="text-left text-accent underline"
                            onClick={() => void navigate({ search: { q: q || undefined, page, user: u.id } })}
                          >
                            {u.email ?? u.phone ?? u.id}
                          </button>
                        </td>
                        <td className="px-2 py-1">{status(u)}</td>
                        <td className="px-2 py-1" data-testid="mfa">
                          {[u.mfa_enabled ? 'TOTP' : '', u.passkeys ? `${u.passkeys} passkey${u.passkeys > 1 ? 's' : ''}` : '']
                            .filter(Boolean)
                            .join(' · ') || '—'}
                        </td>
                        <td className="px-2 py-1">{when(u.created_at)}</td>
                        <td className="px-2 py-1">{when(u.last_sign_in_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <div className="flex gap-2">
              <Button
                disabled={page <= 1}
                onClick={() => void navigate({ search: { q: q || undefined, page: page - 1 > 1 ? page - 1 : undefined, user } })}
              >
                Previous page
              </Button>
              <Button disabled={last >= total} onClick={() => void navigate({ search: { q: q || undefined, page: page + 1, user } })}>
                Next page
              </Button>
            </div>
          </div>
          <div>
            {user ? (
              <UserDetail id={user} onClosed={() => void navigate({ search: { q: q || undefined, page, user: undefined } })} />
            ) : (
              <Notice kind="info">Choose a user to see identities and sessions, and to manage it.</Notice>
            )}
          </div>
        </div>
      )}
      <CreateUser
        open={creating}
        onOpenChange={setCreating}
        onCreated={(u) => void navigate({ search: { q: q || undefined, page, user: u.id } })}
      />
    </div>
  );
}
