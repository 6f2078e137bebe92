import { Notice } from '../../components/ui';
import { useRights } from '../../lib/roles';
import { Admins } from './Admins';
import { Invites } from './Invites';
import { AdminTabs } from '../../components/AdminTabs';

/**
 * `/console/team`: the project's console admins and their roles, and invitations by one-time
 * link (docs/api.md §4.1). Owners and admins only (the server's `team` guard); an admin
 * changes everyone but owners.
 */
export function TeamPage() {
  const rights = useRights();
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Team</h1>
      {rights.manageAdmins && <AdminTabs />}
      {rights.role && !rights.manageAdmins ? (
        <Notice kind="info" title="Not available for your role">
          Only an owner or admin of the project sees and manages its console admins. You are a {rights.role}.
        </Notice>
      ) : rights.role ? (
        <>
          <Admins />
          <Invites />
        </>
      ) : null}
    </div>
  );
}
