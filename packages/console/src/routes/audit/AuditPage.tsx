import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { Button, ErrorNotice, Loading, Notice, when } from '../../components/ui';
import { api } from '../../lib/api';
import { useRights } from '../../lib/roles';
import { AdminTabs } from '../../components/AdminTabs';

/** Entries per page of the audit log. */
export const AUDIT_PAGE = 50;

/** An entry's details in one line, without what has its own column. */
function detailsText(details: Record<string, unknown>): string {
  const { ip: _ip, via: _via, ...rest } = details;
  return Object.keys(rest).length ? JSON.stringify(rest) : '';
}

/**
 * `/console/audit?page=`: every admin action, newest first (`GET /api/v1/admin/audit`,
 * docs/security.md "The audit log"): who (an admin, or the secret key), what, on what, from
 * where. Owners and admins only.
 */
export function AuditPage() {
  const rights = useRights();
  const { page = 1 } = useSearch({ from: '/app/audit' });
  const navigate = useNavigate({ from: '/audit' });
  const log = useQuery({
    queryKey: ['audit', page],
    queryFn: () => api.audit(AUDIT_PAGE, (page - 1) * AUDIT_PAGE),
    enabled: rights.manageAdmins,
    placeholderData: keepPreviousData,
  });
  const total = log.data?.total ?? 0;
  const first = (page - 1) * AUDIT_PAGE + 1;
  const last = first + (log.data?.entries.length ?? 0) - 1;
  const go = (p: number) => void navigate({ search: { page: p > 1 ? p : undefined } });

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Audit log</h1>
      {rights.manageAdmins && <AdminTabs />}
      {rights.role && !rights.manageAdmins ? (
        <Notice kind="info" title="Not available for your role">
          Only an owner or admin of the project reads the audit log. You are a {rights.role}.
        </Notice>
      ) : (
        <>
          <p className="text-sm text-fg-muted">
            Every change made in this console or with the secret key (SQL runs, settings, users, the team, keys, backups) and every console
            sign-in, recorded once it has succeeded. Secret values are never kept.
          </p>
          {log.isLoading && <Loading label="Loading the audit log" />}
          {log.error && <ErrorNotice error={log.error} retry={() => void log.refetch()} />}
          {log.data && (
            <>
              <p role="status" className="text-sm text-fg-muted">
                {total === 0 ? 'Nothing recorded yet.' : `${first}–${last} of ${total} entries`}
                {log.isFetching && !log.isLoading ? ' (updating…)' : ''}
              </p>
              {log.data.entries.length > 0 && (
                <ol aria-label="Audit log" className="divide-y divide-line rounded-md border border-line bg-surface text-sm">
                  {log.data.entries.map((e) => (
                    <li
                      key={e.id}
                      className="grid grid-cols-1 gap-x-3 gap-y-0.5 px-3 py-1.5 md:grid-cols-[11rem_14rem_12rem_minmax(0,1fr)]"
                    >
                      <span className="tabular-nums text-fg-muted">{when(e.at)}</span>
                      <span className="min-w-0 break-words">
                        {e.admin_email ?? (e.details.via === 'secret_key' ? 'secret key' : 'removed admin')}
                        {typeof e.details.ip === 'string' && <span className="ml-1 text-xs text-fg-muted">{e.details.ip}</span>}
                      </span>
                      <code className="font-medium">{e.action}</code>
                      <span className="min-w-0">
                        {e.target && <code className="block break-all">{e.target}</code>}
                        <span className="line-clamp-3 break-all font-mono text-xs text-fg-muted">{detailsText(e.details)}</span>
                      </span>
                    </li>
                  ))}
                </ol>
              )}
              <div className="flex gap-2">
                <Button disabled={page <= 1} onClick={() => go(page - 1)}>
                  Newer
                </Button>
                <Button disabled={last >= total} onClick={() => go(page + 1)}>
                  Older
                </Button>
              </div>
            </>
          )}
        </>
      )}
    </div>
  );
}
