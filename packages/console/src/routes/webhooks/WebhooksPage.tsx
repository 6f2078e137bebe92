import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useState } from 'react';
import { Button, EmptyState, ErrorNotice, Loading } from '../../components/ui';
import { api, type Webhook, type WebhookCreated } from '../../lib/api';
import { useRights } from '../../lib/roles';
import type { WebhooksSearch } from '../../lib/search';
import { WEBHOOK_POLL_MS } from './poll';
import { SecretDialog } from './SecretDialog';
import { WebhookDetail } from './WebhookDetail';
import { WebhookForm } from './WebhookForm';

/**
 * `/console/webhooks`: the project's database webhooks (docs/webhooks.md), one shown at a time
 * with its settings, its secret's rotation and its delivery log.
 */
export function WebhooksPage() {
  const search = useSearch({ from: '/app/webhooks' });
  const navigate = useNavigate({ from: '/webhooks' });
  const go = (patch: Partial<WebhooksSearch>) => void navigate({ search: { ...search, ...patch } });
  const [creating, setCreating] = useState(false);
  // A viewer reads the webhooks and their deliveries only (the server refuses every change to the role).
  const { change } = useRights();
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const list = useQuery({ queryKey: ['webhooks'], queryFn: api.webhooks, refetchInterval: WEBHOOK_POLL_MS });
  const hooks = list.data ?? [];
  const shown = hooks.find((h) => h.id === search.hook) ?? (search.hook ? undefined : hooks[0]);

  const created = (w: WebhookCreated) => {
    setCreating(false);
    setSecret({ name: w.name, secret: w.secret });
    go({ hook: w.id, status: undefined, page: undefined, delivery: undefined });
  };

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Webhooks</h1>
        {change && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create webhook
          </Button>
        )}
      </div>
      <p className="max-w-3xl text-sm text-fg-muted">
        Each insert, update or delete of a table, POSTed as JSON to your endpoint, signed with the webhook's secret, in commit order,
        retried for up to three days while the endpoint fails.
      </p>
      {list.isLoading && <Loading label="Loading webhooks" />}
      {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
      {list.data && hooks.length === 0 && (
        <EmptyState title="No webhook yet" action={change && <Button onClick={() => setCreating(true)}>Create webhook</Button>}>
          A webhook sends the changes of one table to a URL of yours: a function that mails new customers, syncs paid orders to billing, or
          fills a search index.
        </EmptyState>
      )}
      {hooks.length > 0 && (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-[18rem_minmax(0,1fr)]">
          <ul aria-label="Webhooks" className="space-y-1">
            {hooks.map((h) => (
              <li key={h.id}>
                <HookButton
                  hook={h}
                  current={h.id === shown?.id}
                  onClick={() => go({ hook: h.id, status: undefined, page: undefined, delivery: undefined })}
                />
              </li>
            ))}
          </ul>
          {shown ? (
            <WebhookDetail
              key={shown.id}
              hook={shown}
              search={search}
              go={go}
              onSecret={(s) => setSecret({ name: shown.name, secret: s })}
              onDeleted={() => go({ hook: undefined, status: undefined, page: undefined, delivery: undefined })}
            />
          ) : (
            <ErrorNotice error={{ message: 'This webhook no longer exists (deleted, or a stale link).', code: 'webhook_not_found' }} />
          )}
        </div>
      )}
      {creating && <WebhookForm open={creating} onOpenChange={setCreating} onCreated={created} />}
      {secret && <SecretDialog name={secret.name} secret={secret.secret} onClose={() => setSecret(null)} />}
    </div>
  );
}

function HookButton({ hook, current, onClick }: { hook: Webhook; current: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      aria-current={current ? 'true' : undefined}
      onClick={onClick}
      className="w-full rounded-md border border-line bg-surface px-3 py-2 text-left text-sm hover:bg-muted aria-[current=true]:border-accent"
    >
      <span className="flex items-center gap-2">
        <span className="truncate font-medium">{hook.name}</span>
        <span className={`ml-auto shrink-0 rounded-full px-2 text-xs ${hook.enabled ? 'bg-ok/15 text-ok' : 'bg-muted text-fg-muted'}`}>
          {hook.enabled ? 'on' : 'off'}
        </span>
      </span>
      <span className="block truncate text-xs text-fg-muted">
        {hook.table} · {hook.events.join(', ')}
        {hook.queued > 0 ? ` · ${hook.queued} queued` : ''}
      </span>
    </button>
  );
}
