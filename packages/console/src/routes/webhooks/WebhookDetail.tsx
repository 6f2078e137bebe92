import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, Confirm, ErrorNotice, Notice, Toggle, when } from '../../components/ui';
import { api, type Webhook } from '../../lib/api';
import { useRights } from '../../lib/roles';
import type { WebhooksSearch } from '../../lib/search';
import { Deliveries } from './Deliveries';
import { WebhookForm } from './WebhookForm';

/** One webhook: what it sends where, on/off, edit, secret rotation, delete, and its delivery log. */
export function WebhookDetail(props: {
  hook: Webhook;
  search: WebhooksSearch;
  go: (p: Partial<WebhooksSearch>) => void;
  onSecret: (secret: string) => void;
  onDeleted: () => void;
}) {
  const { hook } = props;
  const queryClient = useQueryClient();
  const { change } = useRights();
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState<null | 'keep' | 'revoke'>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['webhooks'] });
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.updateWebhook(hook.id, { enabled }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: () => api.deleteWebhook(hook.id),
    onSuccess: async () => {
      setConfirmDelete(false);
      // Away from the webhook first: its delivery log stops polling before the list is read again
      // (a poll of a deleted webhook's log is a 404).
      props.onDeleted();
      queryClient.removeQueries({ queryKey: ['webhook-deliveries', hook.id] });
      await refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: (revoke: boolean) => api.rotateWebhookSecret(hook.id, revoke),
    onSuccess: async (r) => {
      setConfirmRotate(null);
      await refresh();
      props.onSecret(r.secret);
    },
  });
  const headerNames = Object.keys(hook.headers);

  return (
    <div className="min-w-0 space-y-4">
      <Card title={hook.name}>
        <div className="space-y-3 text-sm">
          {change && (
            <div className="flex flex-wrap gap-2">
              <Button onClick={() => setEditing(true)}>Edit</Button>
              <Button onClick={() => setConfirmRotate('keep')}>Rotate secret</Button>
              <Button variant="danger" onClick={() => setConfirmDelete(true)}>
                Delete
              </Button>
            </div>
          )}
          <Toggle
            label={hook.enabled ? 'Enabled: changes are delivered' : 'Disabled: changes are not delivered'}
            checked={hook.enabled}
            onChange={(v) => toggle.mutate(v)}
            disabled={!change || toggle.isPending}
            reason={change ? undefined : 'Your role reads only: an owner, admin or developer switches a webhook.'}
            error={toggle.error ? (toggle.error as Error).message : null}
          />
          <dl className="grid grid-cols-1 gap-x-3 gap-y-1 sm:grid-cols-[8rem_minmax(0,1fr)]">
            <dt className="text-fg-muted">URL</dt>
            <dd className="break-all font-mono text-xs">{hook.url}</dd>
            <dt className="text-fg-muted">Table</dt>
            <dd>{hook.table}</dd>
            <dt className="text-fg-muted">Events</dt>
            <dd>{hook.events.join(', ')}</dd>
            <dt className="text-fg-muted">Filter</dt>
            <dd className="break-all font-mono text-xs">{hook.filter ?? 'every row'}</dd>
            <dt className="text-fg-muted">Extra headers</dt>
            <dd className="break-all font-mono text-xs">
              {headerNames.length ? headerNames.map((n) => `${n}: ${hook.headers[n]}`).join(', ') : 'none'}
            </dd>
            <dt className="text-fg-muted">Queued</dt>
            <dd>{hook.queued}</dd>
            <dt className="text-fg-muted">Created</dt>
            <dd>{when(hook.created_at)}</dd>
          </dl>
          {hook.previous_secret_expires_at && (
            <Notice kind="info">
              The secret before the last rotation also signs requests until {when(hook.previous_secret_expires_at)}.
            </Notice>
          )}
          {remove.error && <ErrorNotice error={remove.error} />}
          {rotate.error && <ErrorNotice error={rotate.error} />}
        </div>
      </Card>
      <Deliveries hook={hook} search={props.search} go={props.go} />
      {editing && <WebhookForm open={editing} onOpenChange={setEditing} editing={hook} />}
      <Confirm
        title={`Delete ${hook.name}?`}
        description="Its deliveries stop, queued ones included, and its delivery log goes with it."
        confirm="Delete webhook"
        open={confirmDelete}
        onOpenChange={setConfirmDelete}
        onConfirm={() => remove.mutate()}
      />
      <Confirm
        title="Rotate the signing secret?"
        description={
          <>
            A new secret signs from now on, shown once. The current one also signs (a second v1= in Plinth-Signature) for 24 hours, so your
            endpoint can switch without refusing a delivery.
            <label className="mt-3 flex items-center gap-2 text-fg">
              <input
                type="checkbox"
                checked={confirmRotate === 'revoke'}
                onChange={(e) => setConfirmRotate(e.target.checked ? 'revoke' : 'keep')}
              />
              Stop the current secret at once (it leaked)
            </label>
          </>
        }
        confirm="Rotate secret"
        open={confirmRotate !== null}
        onOpenChange={(o) => !o && setConfirmRotate(null)}
        onConfirm={() => rotate.mutate(confirmRotate === 'revoke')}
      />
    </div>
  );
}
