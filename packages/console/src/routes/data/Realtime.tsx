import type { RealtimeChange, RealtimeStatus, RealtimeSubscription } from '@plinth/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Button, Card, ErrorNotice, Loading, Notice, Toggle } from '../../components/ui';
import { ApiFailure, api, serverUrl } from '../../lib/api';
import { keysQuery } from '../../lib/queries';
import { useRights } from '../../lib/roles';
import type { Caller } from '../../lib/search';
import { CallerPanel, useTestUser } from '../api/CallerPanel';
import { makeCallers } from '../api/callers';

/** Changes kept on screen (newest first). */
const KEPT = 100;

/**
 * The **Realtime** tab of a table (docs/realtime.md): whether its changes are captured
 * (`PUT`/`DELETE /api/v1/realtime/tables/{t}`, a switch), and a live view of them through the
 * SDK's realtime client, as the caller the API explorer offers (anon, a test user, the secret
 * key), so what arrives is what that caller's app would receive under its policies.
 */
export function Realtime({ table }: { table: string }) {
  const rights = useRights();
  const queryClient = useQueryClient();
  const tables = useQuery({ queryKey: ['realtime-tables'], queryFn: api.realtimeTables });
  const enabled = tables.data?.find((t) => t.table === table)?.enabled ?? false;
  const toggle = useMutation({
    mutationFn: (on: boolean) => api.setRealtime(table, on),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['realtime-tables'] }),
  });
  const refusal = toggle.error instanceof ApiFailure ? `${toggle.error.message} (${toggle.error.code})` : null;
  return (
    <div className="space-y-4">
      <Card title="Capture">
        {tables.isLoading && <Loading label="Reading which tables are captured" />}
        {tables.error && <ErrorNotice error={tables.error} retry={() => void tables.refetch()} />}
        {tables.data && (
          <Toggle
            label={`Push the changes of ${table} to clients`}
            checked={enabled}
            disabled={!rights.change || toggle.isPending}
            reason={
              rights.change
                ? 'Capture costs every write of the table a little (a trigger appends each change to a log), so it is off until you turn it on. Same as select realtime.enable(…).'
                : 'Your role reads only: an owner, admin or developer switches capture.'
            }
            error={refusal}
            onChange={(on) => toggle.mutate(on)}
          />
        )}
      </Card>
      {tables.data && <LiveView table={table} enabled={enabled} />}
    </div>
  );
}

function LiveView({ table, enabled }: { table: string; enabled: boolean }) {
  const keys = useQuery(keysQuery);
  const callers = useQuery({
    queryKey: ['tryit-callers', serverUrl, keys.data?.public_key],
    queryFn: () => makeCallers(serverUrl, keys.data?.public_key ?? ''),
    enabled: Boolean(keys.data),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
  });
  const user = useTestUser(callers.data);
  const [caller, setCaller] = useState<Caller>('anon');
  const [revealed, setRevealed] = useState(false);
  const [filter, setFilter] = useState('');
  const [live, setLive] = useState(false);
  const [status, setStatus] = useState<{ status: RealtimeStatus; error?: string } | null>(null);
  const [changes, setChanges] = useState<RealtimeChange[]>([]);
  const sub = useRef<RealtimeSubscription | null>(null);

  const client =
    callers.data && keys.data
      ? caller === 'secret'
        ? revealed && keys.data.secret_key
          ? callers.data.secret(keys.data.secret_key)
          : null
        : caller === 'user'
          ? user
            ? callers.data.user
            : null
          : callers.data.anon
      : null;
  const why =
    caller === 'secret' && !revealed
      ? 'Reveal the secret key first (Call as: Secret key).'
      : caller === 'user' && !user
        ? 'Sign in a test user first (Call as: Test user).'
        : null;

  // One subscription while live, for the caller chosen; a change of caller or filter starts another.
  useEffect(() => {
    if (!live || !client) return;
    setStatus({ status: 'RECONNECTING' });
    const s = client.realtime.subscribe(
      { table, ...(filter.trim() ? { filter: filter.trim() } : {}) },
      (change) => setChanges((prev) => [change, ...prev].slice(0, KEPT)),
      (st, error) => setStatus({ status: st, error: error ? `${error.message} (${error.code})` : undefined }),
    );
    sub.current = s;
    return () => {
      sub.current = null;
      void s.unsubscribe();
    };
  }, [live, client, table, filter]);

  return (
    <Card
      title="Live changes"
      actions={
        live ? (
          <Button onClick={() => setLive(false)}>Stop</Button>
        ) : (
          <Button variant="primary" disabled={!client || !enabled} onClick={() => setLive(true)}>
            Watch changes
          </Button>
        )
      }
    >
      <div className="space-y-3">
        {!enabled && <Notice kind="info">Turn capture on above to watch this table's changes.</Notice>}
        <CallerPanel
          callers={callers.data}
          caller={caller}
          onCaller={setCaller}
          user={user}
          revealed={revealed}
          onReveal={setRevealed}
          secretKey={keys.data?.secret_key}
          inlineKeys={false}
        />
        <label className="flex flex-col gap-1 text-sm">
          <span className="font-medium">Filter (optional, as in the REST API)</span>
          <input
            value={filter}
            placeholder="eq.done=false"
            onChange={(e) => setFilter(e.target.value)}
            className="w-full max-w-md rounded-md border border-line bg-surface px-2.5 py-1.5 font-mono text-sm"
          />
        </label>
        {why && live && <Notice kind="warn">{why}</Notice>}
        <p role="status" className="text-sm text-fg-muted" data-testid="realtime-status">
          {live && status
            ? status.status === 'SUBSCRIBED'
              ? `Live: ${changes.length} change${changes.length === 1 ? '' : 's'} received`
              : status.status === 'RECONNECTING'
                ? 'Connecting…'
                : status.status === 'ERROR'
                  ? `Refused: ${status.error ?? 'the subscription failed'}`
                  : 'Stopped'
            : 'Not watching.'}
        </p>
        {changes.length > 0 && (
          <ol aria-label="Changes" className="divide-y divide-line rounded-md border border-line text-sm">
            {changes.map((c) => (
              <li key={`${c.seq}-${c.op}`} className="grid grid-cols-1 gap-x-3 px-2 py-1.5 sm:grid-cols-[5rem_4rem_minmax(0,1fr)]">
                <code className={c.op === 'delete' || c.op === 'leave' ? 'text-danger' : c.op === 'insert' ? 'text-ok' : 'text-warn'}>
                  {c.op}
                </code>
                <span className="text-xs tabular-nums text-fg-muted">#{c.seq}</span>
                <code className="break-all text-xs">{JSON.stringify(c.row ?? c.old)}</code>
              </li>
            ))}
          </ol>
        )}
        <p className="text-xs text-fg-muted">
          What arrives is what the chosen caller's app receives with <code>client.realtime.subscribe({`{ table: '${table}' }`})</code>: the
          table's row-level security decides, per change.
        </p>
      </div>
    </Card>
  );
}
