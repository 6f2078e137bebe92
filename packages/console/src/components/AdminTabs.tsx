import { Link } from '@tanstack/react-router';

/** The project's administration (owners and admins): one nav entry, "Admin", and these tabs. */
const TABS = [
  ['/team', 'Team'],
  ['/audit', 'Audit log'],
  ['/backups', 'Backups'],
] as const;

/** The tabs atop the Team, Audit log and Backups pages (the top bar has room for one entry). */
export function AdminTabs() {
  return (
    <nav aria-label="Project administration" className="flex flex-wrap gap-1 border-b border-line pb-2">
      {TABS.map(([to, label]) => (
        <Link
          key={to}
          to={to}
          activeOptions={{ includeSearch: false }}
          className="rounded-md px-2 py-1 text-sm text-fg-muted hover:bg-muted data-[status=active]:bg-muted data-[status=active]:text-fg"
        >
          {label}
        </Link>
      ))}
    </nav>
  );
}
