/**
 * Console admin roles (docs/api.md §4.1): a closed list, read by the server's guards and
 * the console alike. The first admin is an `owner`.
 */
export const ADMIN_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;

export type AdminRole = (typeof ADMIN_ROLES)[number];

/** What each role may do with a console session (the secret key may do everything). */
export interface RoleRights {
  /** Make changes (every method but GET and HEAD) on the management API and storage. */
  change: boolean;
  /** Run the SQL runner. */
  sql: boolean;
  /** Read the secret key (`GET /api/v1/admin/keys`). */
  secretKey: boolean;
  /** Invite, list, change and remove admins (not owners); read the audit log; rotate signing keys. */
  manageAdmins: boolean;
  /** Also invite, change and remove owners. */
  manageOwners: boolean;
}

export const ROLE_RIGHTS: Readonly<Record<AdminRole, Readonly<RoleRights>>> = {
  owner: { change: true, sql: true, secretKey: true, manageAdmins: true, manageOwners: true },
  admin: { change: true, sql: true, secretKey: true, manageAdmins: true, manageOwners: false },
  developer: { change: true, sql: true, secretKey: false, manageAdmins: false, manageOwners: false },
  viewer: { change: false, sql: false, secretKey: false, manageAdmins: false, manageOwners: false },
};

/**
 * @example isAdminRole('developer') // true
 */
export function isAdminRole(value: unknown): value is AdminRole {
  return typeof value === 'string' && (ADMIN_ROLES as readonly string[]).includes(value);
}

/** A pending invitation (`POST`/`GET /api/v1/admin/invites`); `link` only in the answer that made it. */
export interface AdminInvite {
  id: string;
  email: string;
  role: AdminRole;
  /** The one-time link, shown once. */
  link?: string;
  created_at: string;
  expires_at: string;
  invited_by: string | null;
}

/** One entry of the audit log (`GET /api/v1/admin/audit`), newest first. */
export interface AuditEntry {
  id: string;
  at: string;
  /** The admin who acted; null when it was the secret key (or an admin since removed: see `details.admin_id`). */
  admin_email: string | null;
  /** `sql.run`, `settings.auth.update`, `user.update`, `admin.invite`, `signing_keys.rotate`, … */
  action: string;
  /** What it acted on: a user or admin id, a bucket, an object path; null when nothing in particular. */
  target: string | null;
  details: Record<string, unknown>;
}
