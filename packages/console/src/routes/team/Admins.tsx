import type { AdminRole } from '@plinth/shared';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, Confirm, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { type Admin, api } from '../../lib/api';
import { meQuery } from '../../lib/queries';
import { givableRoles, ROLE_WORDS, useRights } from '../../lib/roles';

const adminsQuery = { queryKey: ['admins'], queryFn: api.admins };

/** The console admins with their roles: change a role, remove an admin (the server keeps the last owner). */
export function Admins() {
  const rights = useRights();
  const me = useQuery(meQuery);
  const list = useQuery(adminsQuery);
  const queryClient = useQueryClient();
  const [removing, setRemoving] = useState<Admin | null>(null);
  const [done, setDone] = useState('');
  const roles = givableRoles(rights);
  const changed = () => void queryClient.invalidateQueries({ queryKey: ['admins'] });
  const setRole = useMutation({
    mutationFn: (v: { admin: Admin; role: AdminRole }) => api.setAdminRole(v.admin.id, v.role),
    onSuccess: (a) => {
      remove.reset();
      setDone(`${a.email} is now ${a.role === 'admin' ? 'an' : 'a'} ${a.role}.`);
      if (a.id === me.data?.admin.id) void queryClient.invalidateQueries({ queryKey: ['me'] });
      changed();
    },
    onError: () => setDone(''),
  });
  const remove = useMutation({
    mutationFn: (a: Admin) => api.removeAdmin(a.id),
    onSuccess: (a) => {
      setRole.reset();
      setDone(`${a.email} was removed; their sessions have ended.`);
      changed();
    },
    onError: () => setDone(''),
  });
  const error = setRole.error ?? remove.error;
  // Only an owner touches owners (the server's rule): for an admin, an owner's row is read-only.
  const mayChange = (a: Admin) => rights.change && (rights.manageOwners || a.role !== 'owner');

  return (
    <Card title="Admins">
      {list.isLoading && <Loading label="Loading the admins" />}
      {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
      {error && <ErrorNotice error={error} />}
      {done && <Notice kind="ok">{done}</Notice>}
      {list.data && (
        <ul aria-label="Admins" className="mt-2 divide-y divide-line rounded-md border border-line text-sm">
          {list.data.map((a) => (
            <li key={a.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-2 py-1.5">
              <span className="min-w-0 break-words font-medium">
                {a.email}
                {a.id === me.data?.admin.id && <span className="ml-1 font-normal text-fg-muted">(you)</span>}
              </span>
              <span className="text-xs text-fg-muted">last sign-in {when(a.last_sign_in_at)}</span>
              <span className="ml-auto flex items-center gap-1">
                {mayChange(a) ? (
                  <select
                    aria-label={`Role of ${a.email}`}
                    title={ROLE_WORDS[a.role]}
                    value={a.role}
                    disabled={setRole.isPending}
                    onChange={(e) => setRole.mutate({ admin: a, role: e.target.value as AdminRole })}
                    className="rounded-md border border-line bg-surface px-2 py-1 text-sm"
                  >
                    {(roles.includes(a.role) ? roles : [a.role, ...roles]).map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  <span data-testid={`role-${a.email}`}>{a.role}</span>
                )}
                {mayChange(a) && (
                  <Button variant="ghost" aria-label={`Remove ${a.email}`} onClick={() => setRemoving(a)}>
                    Remove
                  </Button>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p className="mt-2 text-xs text-fg-muted">
        Owners manage everything, owners included; admins everything but owners; developers use every page but the team and the secret key;
        viewers read only. The project always keeps one owner.
      </p>
      <Confirm
        title="Remove this admin?"
        description={`${removing?.email ?? ''} will no longer sign in to this console; their open sessions end now.`}
        confirm="Remove admin"
        open={removing !== null}
        onOpenChange={(o) => !o && setRemoving(null)}
        onConfirm={() => {
          if (removing) remove.mutate(removing);
          setRemoving(null);
        }}
      />
    </Card>
  );
}
