import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, Dialog, ErrorNotice, Loading, when } from '../../components/ui';
import { api, type Webhook, type WebhookDelivery } from '../../lib/api';
import { useRights } from '../../lib/roles';
import type { WebhooksSearch } from '../../lib/search';
import { WEBHOOK_POLL_MS } from './poll';

const PAGE = 25;
const SELECT = 'rounded-md border border-line bg-surface px-2 py-1.5 text-sm text-fg';

const statusClass = (s: WebhookDelivery['status']) => (s === 'failed' ? 'text-danger' : s === 'sent' ? 'text-ok' : 'text-warn');

/** What the last attempt got, in a few words. */
function answer(d: WebhookDelivery): string {
  if (d.attempts === 0) return d.status === 'failed' ? (d.response ?? 'not sent') : 'not tried yet';
  return `${d.response_status ?? 'no answer'}${d.response ? ` · ${d.response}` : ''}`;
}

/** A webhook's delivery log, newest first, 25 a page: status, attempts, the last answer, redelivery. */
export function Deliveries({ hook, search, go }: { hook: Webhook; search: WebhooksSearch; go: (p: Partial<WebhooksSearch>) => void }) {
  const queryClient = useQueryClient();
  const { change } = useRights();
  const page = search.page ?? 1;
  const log = useQuery({
    queryKey: ['webhook-deliveries', hook.id, search.status, page],
    queryFn: () => api.webhookDeliveries(hook.id, { status: search.status, limit: PAGE, offset: (page - 1) * PAGE }),
    placeholderData: keepPreviousData,
    refetchInterval: WEBHOOK_POLL_MS,
  });
  const redeliver = useMutation({
    mutationFn: (id: string) => api.redeliver(hook.id, id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', hook.id] });
      await queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  const rows = log.data?.deliveries ?? [];
  const total = log.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE));

  return (
    <Card
      title="Delivery log"
      actions={
        <div className="flex items-center gap-2">
          <label htmlFor="delivery-status" className="text-sm">
            Status
          </label>
          <select
            id="delivery-status"
            className={SELECT}
            value={search.status ?? ''}
            onChange={(e) => go({ status: (e.target.value || undefined) as WebhooksSearch['status'], page: undefined })}
          >
            <option value="">all</option>
            <option value="queued">queued</option>
            <option value="sent">sent</option>
            <option value="failed">failed</option>
          </select>
        </div>
      }
    >
      {log.isLoading && <Loading label="Loading the delivery log" />}
      {log.error && <ErrorNotice error={log.error} retry={() => void log.refetch()} />}
      {log.data && (
        <div className="space-y-2">
          <p role="status" className="text-sm text-fg-muted">
            {total === 0
              ? search.status
                ? `No ${search.status} delivery.`
                : `No delivery yet: a change of ${hook.table} (${hook.events.join(', ')}) makes one.`
              : `${(page - 1) * PAGE + 1}–${(page - 1) * PAGE + rows.length} of ${total} deliveries, newest first`}
          </p>
          {redeliver.error && <ErrorNotice error={redeliver.error} />}
          {redeliver.data && (
            <p role="status" className="text-sm text-ok">
              Redelivery {redeliver.data.id} of change {redeliver.data.seq} queued.
            </p>
          )}
          {rows.length > 0 && (
            <div className="overflow-x-auto rounded-md border border-line">
              <table className="w-full min-w-[44rem] text-left text-sm" aria-label="Deliveries">
                <thead className="bg-muted">
                  <tr>
                    {['Change', 'Status', 'Attempts', 'Last answer', 'Time', 'Delivery', ''].map((h) => (
                      // relative: the sr-only label is placed inside the table, not at the page's edge.
                      <th key={h || 'actions'} scope="col" className="relative px-2 py-1 font-medium">
                        {h || <span className="sr-only">Actions</span>}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((d) => (
                    <tr key={d.id} className="border-t border-line align-top">
                      <td className="whitespace-nowrap px-2 py-1">
                        {d.event} #{d.seq}
                        {d.redelivery_of ? <span className="block text-xs text-fg-muted">redelivers {d.redelivery_of}</span> : null}
                      </td>
                      <td className={`px-2 py-1 ${statusClass(d.status)}`}>
                        {d.status}
                        {d.status === 'queued' && d.attempts > 0 && d.next_attempt_at ? (
                          <span className="block text-xs text-fg-muted">next {when(d.next_attempt_at)}</span>
                        ) : null}
                      </td>
                      <td className="px-2 py-1">{d.attempts}</td>
                      <td className="min-w-[10rem] max-w-[22rem] break-words px-2 py-1 font-mono text-xs">
                        {answer(d).slice(0, 160)}
                        {d.duration_ms !== null ? <span className="text-fg-muted"> ({d.duration_ms} ms)</span> : null}
                      </td>
                      <td className="whitespace-nowrap px-2 py-1 text-xs">{when(d.updated_at)}</td>
                      <td className="px-2 py-1 font-mono text-xs">{d.id}</td>
                      <td className="whitespace-nowrap px-2 py-1 text-right">
                        <Button variant="ghost" aria-label={`Details of delivery ${d.id}`} onClick={() => go({ delivery: d.id })}>
                          Details
                        </Button>
                        {change && d.status !== 'queued' && (
                          <Button
                            aria-label={`Redeliver delivery ${d.id}`}
                            disabled={redeliver.isPending}
                            onClick={() => redeliver.mutate(d.id)}
                          >
                            Redeliver
                          </Button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {pages > 1 && (
            <nav aria-label="Delivery log pages" className="flex items-center gap-2 text-sm">
              <Button disabled={page <= 1} onClick={() => go({ page: page - 1 === 1 ? undefined : page - 1 })}>
                Newer
              </Button>
              <span>
                Page {page} of {pages}
              </span>
              <Button disabled={page >= pages} onClick={() => go({ page: page + 1 })}>
                Older
              </Button>
            </nav>
          )}
        </div>
      )}
      {search.delivery && <DeliveryDetail hook={hook} id={search.delivery} onClose={() => go({ delivery: undefined })} />}
    </Card>
  );
}

/** One delivery: the exact body it POSTs, and the whole last answer. */
function DeliveryDetail({ hook, id, onClose }: { hook: Webhook; id: string; onClose: () => void }) {
  const d = useQuery({ queryKey: ['webhook-delivery', hook.id, id], queryFn: () => api.webhookDelivery(hook.id, id) });
  let body = d.data?.body ?? '';
  try {
    body = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // shown as sent
  }
  return (
    <Dialog title={`Delivery ${id}`} open onOpenChange={(o) => !o && onClose()}>
      <div className="max-h-[70vh] space-y-3 overflow-y-auto text-sm">
        {d.isLoading && <Loading label="Loading the delivery" />}
        {d.error && <ErrorNotice error={d.error} />}
        {d.data && (
          <>
            <p>
              {d.data.event} of {d.data.table}, change #{d.data.seq} · {d.data.status} after {d.data.attempts} attempt
              {d.data.attempts === 1 ? '' : 's'}
              {d.data.truncated ? ' · the row was over 256 KiB: the body carries its primary key' : ''}
            </p>
            <h3 className="font-semibold">Last answer</h3>
            <pre className="whitespace-pre-wrap break-words rounded-md border border-line bg-muted p-2 text-xs">{answer(d.data)}</pre>
            <h3 className="font-semibold">Body</h3>
            <pre className="overflow-x-auto rounded-md border border-line bg-muted p-2 text-xs">{body}</pre>
          </>
        )}
        <div className="flex justify-end">
          <Button onClick={onClose}>Close</Button>
        </div>
      </div>
    </Dialog>
  );
}
