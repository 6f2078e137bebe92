import { type AdminRole, ROLE_RIGHTS, type RoleRights } from '@plinth/shared';
import { useQuery } from '@tanstack/react-query';
import { meQuery } from './queries';

const NONE: RoleRights = { change: false, sql: false, secretKey: false, manageAdmins: false, manageOwners: false };

/**
 * What the signed-in admin's role lets them do (packages/shared `ROLE_RIGHTS`, the server's own
 * table): pages show only the controls the server would accept. Nothing until `me` has
 * answered, so a control never flashes in and out.
 * @example const { change, manageAdmins } = useRights(); {change && <Button>Save</Button>}
 */
export function useRights(): RoleRights & { role: AdminRole | null } {
  const me = useQuery(meQuery);
  const role = me.data?.admin.role ?? null;
  return { ...(role ? ROLE_RIGHTS[role] : NONE), role };
}

/** The roles an admin with `rights` may give (only an owner makes owners). */
export const givableRoles = (rights: RoleRights): AdminRole[] =>
  rights.manageOwners ? ['owner', 'admin', 'developer', 'viewer'] : ['admin', 'developer', 'viewer'];

/** What each role may do, in words (the Team page's role picker and invitation form). */
export const ROLE_WORDS: Record<AdminRole, string> = {
  owner: 'Owner: everything, including owners',
  admin: 'Admin: everything but owners',
  developer: 'Developer: no secret key, no team',
  viewer: 'Viewer: reads only',
};
