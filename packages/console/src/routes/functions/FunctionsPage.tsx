import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Card, Confirm, EmptyState, ErrorNotice, Field, Loading, when } from '../../components/ui';
import { useRights } from '../../lib/roles';
import { type FunctionCall, type FunctionListing, FUNCTIONS_POLL_MS, functionsApi } from './api';

/**
 * `/console/functions`: the project's functions (docs/functions.md) with their recent calls
 * (status, duration, console output), deployed versions and rollback, the schedules with their
 * last and next run, and the functions' secrets (masked; set and unset).
 */
export function FunctionsPage() {
  const { change } = useRights();
  const list = useQuery({ queryKey: ['functions'], queryFn: functionsApi.list, refetchInterval: FUNCTIONS_POLL_MS });
  const [chosen, setChosen] = useState<string | null>(null);
  const fns = list.data ?? [];
  const shown = fns.find((f) => f.name === chosen) ?? fns[0];
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Functions</h1>
      <p className="max-w-3xl text-sm text-fg-muted">
        Your own server code beside your data: <code>functions/&lt;name&gt;.ts</code> in the project folder, or a version sent with{' '}
        <code>plinth functions deploy</code> (a deployed version overrides the file). Called at <code>/api/v1/functions/&lt;name&gt;</code>,
        by schedules and by webhooks.
      </p>
      {list.isLoading && <Loading label="Loading functions" />}
      {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
      {list.data && fns.length === 0 && (
        <EmptyState title="No function yet">
          Write one with <code>plinth functions new hello</code>, then call it, or deploy it to this server with{' '}
          <code>plinth functions deploy hello --url … --key …</code>.
        </EmptyState>
      )}
      {fns.length > 0 && shown && (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-[18rem_minmax(0,1fr)]">
          <ul aria-label="Functions" className="space-y-1">
            {fns.map((f) => (
              <li key={f.name}>
                <FunctionButton fn={f} current={f.name === shown.name} onClick={() => setChosen(f.name)} />
              </li>
            ))}
          </ul>
          <FunctionDetail key={shown.name} fn={shown} change={change} />
        </div>
      )}
      <Schedules />
      <Secrets change={change} />
    </div>
  );
}

function FunctionButton({ fn, current, onClick }: { fn: FunctionListing; current: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      aria-current={current ? 'true' : undefined}
      onClick={onClick}
      className="w-full rounded-md border border-line bg-surface px-3 py-2 text-left text-sm hover:bg-muted aria-[current=true]:border-accent"
    >
      <span className="flex items-center gap-2">
        <span className="truncate font-medium">{fn.name}</span>
        <span
          className={`ml-auto shrink-0 rounded-full px-2 text-xs ${fn.version !== null ? 'bg-ok/15 text-ok' : 'bg-muted text-fg-muted'}`}
        >
          {fn.version !== null ? `v${fn.version}` : 'file'}
        </span>
      </span>
      <span className="block truncate text-xs text-fg-muted">
        {fn.file ?? 'deployed only'}
        {fn.schedule ? ` · ${fn.schedule}` : ''}
      </span>
    </button>
  );
}

const statusClass = (c: FunctionCall) => (c.code || c.status >= 500 ? 'text-danger' : c.status >= 400 ? 'text-warn' : 'text-ok');

function FunctionDetail({ fn, change }: { fn: FunctionListing; change: boolean }) {
  const queryClient = useQueryClient();
  const calls = useQuery({
    queryKey: ['function-calls', fn.name],
    queryFn: () => functionsApi.calls(fn.name),
    refetchInterval: FUNCTIONS_POLL_MS,
  });
  const versions = useQuery({ queryKey: ['function-versions', fn.name], queryFn: () => functionsApi.versions(fn.name) });
  const [rollTo, setRollTo] = useState<number | null>(null);
  const rollback = useMutation({
    mutationFn: (to: number) => functionsApi.rollback(fn.name, to),
    onSuccess: async () => {
      setRollTo(null);
      await queryClient.invalidateQueries({ queryKey: ['function-versions', fn.name] });
      await queryClient.invalidateQueries({ queryKey: ['functions'] });
    },
  });
  const rows = calls.data ?? [];
  return (
    <div className="min-w-0 space-y-4">
      <Card title={`Recent calls of ${fn.name}`}>
        {calls.isLoading && <Loading label="Loading calls" />}
        {calls.error && <ErrorNotice error={calls.error} retry={() => void calls.refetch()} />}
        {calls.data && rows.length === 0 && <p className="text-sm text-fg-muted">No recent call.</p>}
        {rows.length > 0 && (
          <table aria-label="Recent calls" className="w-full text-sm">
            <thead className="text-left text-xs text-fg-muted">
              <tr>
                <th className="py-1 pr-3 font-medium">When</th>
                <th className="py-1 pr-3 font-medium">Version</th>
                <th className="py-1 pr-3 font-medium">Status</th>
                <th className="py-1 pr-3 font-medium">Duration</th>
                <th className="py-1 font-medium">Logs</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id} className="border-t border-line align-top">
                  <td className="py-1 pr-3 whitespace-nowrap">{when(c.at)}</td>
                  <td className="py-1 pr-3">{c.version === null ? 'file' : `v${c.version}`}</td>
                  <td className={`py-1 pr-3 whitespace-nowrap ${statusClass(c)}`}>
                    {c.status}
                    {c.code ? ` ${c.code}` : ''}
                    {c.trigger === 'service' ? ' · service' : ''}
                  </td>
                  <td className="py-1 pr-3 whitespace-nowrap">{c.duration_ms} ms</td>
                  <td className="py-1">
                    {c.logs ? (
                      <pre className="max-h-40 overflow-auto whitespace-pre-wrap rounded bg-muted p-1 font-mono text-xs">{c.logs}</pre>
                    ) : (
                      <span className="text-fg-muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <Card title="Deployed versions">
        {versions.error && <ErrorNotice error={versions.error} />}
        {versions.data && versions.data.length === 0 && (
          <p className="text-sm text-fg-muted">
            None: the project folder's file serves. <code>plinth functions deploy {fn.name}</code> sends a version.
          </p>
        )}
        {versions.data && versions.data.length > 0 && (
          <ul aria-label="Versions" className="space-y-1 text-sm">
            {versions.data.map((v) => (
              <li key={v.version} className="flex items-center gap-3">
                <span className="font-medium">v{v.version}</span>
                <span className="text-fg-muted">{when(v.created_at)}</span>
                <span className="text-fg-muted">{v.size} bytes</span>
                {v.live ? (
                  <span className="rounded-full bg-ok/15 px-2 text-xs text-ok">live</span>
                ) : (
                  change && (
                    <Button className="ml-auto" onClick={() => setRollTo(v.version)}>
                      Make v{v.version} live
                    </Button>
                  )
                )}
              </li>
            ))}
          </ul>
        )}
        {rollback.error && <ErrorNotice error={rollback.error} />}
      </Card>
      <Confirm
        title={`Roll ${fn.name} back?`}
        description={`Version ${rollTo} serves every call from now on, on every instance.`}
        confirm={`Make v${rollTo} live`}
        open={rollTo !== null}
        onOpenChange={(o) => !o && setRollTo(null)}
        onConfirm={() => rollTo !== null && rollback.mutate(rollTo)}
      />
    </div>
  );
}

function Schedules() {
  const q = useQuery({ queryKey: ['function-schedules'], queryFn: functionsApi.schedules, refetchInterval: FUNCTIONS_POLL_MS });
  return (
    <Card title="Schedules">
      {q.error && <ErrorNotice error={q.error} />}
      {q.data && q.data.length === 0 && (
        <p className="text-sm text-fg-muted">
          Nothing scheduled: <code>{'{"schedule": "*/5 * * * *"}'}</code> in <code>functions/&lt;name&gt;/config.json</code> or plinth.json.
        </p>
      )}
      {q.data && q.data.length > 0 && (
        <table aria-label="Schedules" className="w-full text-sm">
          <thead className="text-left text-xs text-fg-muted">
            <tr>
              <th className="py-1 pr-3 font-medium">Function</th>
              <th className="py-1 pr-3 font-medium">Schedule (UTC)</th>
              <th className="py-1 pr-3 font-medium">Last run</th>
              <th className="py-1 pr-3 font-medium">Status</th>
              <th className="py-1 pr-3 font-medium">Next run</th>
              <th className="py-1 font-medium">Runs · missed</th>
            </tr>
          </thead>
          <tbody>
            {q.data.map((s) => (
              <tr key={s.function} className="border-t border-line">
                <td className="py-1 pr-3 font-medium">{s.function}</td>
                <td className="py-1 pr-3 font-mono text-xs">{s.cron}</td>
                <td className="py-1 pr-3">{when(s.last_started_at)}</td>
                <td
                  className={`py-1 pr-3 ${s.last_status === 'ok' ? 'text-ok' : s.last_status ? 'text-danger' : 'text-fg-muted'}`}
                  title={s.last_detail ?? undefined}
                >
                  {s.last_status ?? 'not run yet'}
                </td>
                <td className="py-1 pr-3">{when(s.next_at)}</td>
                <td className="py-1">
                  {s.runs} · {s.missed}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

function Secrets({ change }: { change: boolean }) {
  const queryClient = useQueryClient();
  const q = useQuery({ queryKey: ['function-secrets'], queryFn: functionsApi.secrets });
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [unsetting, setUnsetting] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['function-secrets'] });
  const set = useMutation({
    mutationFn: () => functionsApi.setSecret(name.trim(), value),
    onSuccess: async () => {
      setName('');
      setValue('');
      await refresh();
    },
  });
  const unset = useMutation({
    mutationFn: (n: string) => functionsApi.unsetSecret(n),
    onSuccess: async () => {
      setUnsetting(null);
      await refresh();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    set.mutate();
  };
  return (
    <Card title="Secrets">
      <p className="mb-2 text-sm text-fg-muted">
        The functions' <code>ctx.secrets</code>: those set here are stored (sealed) in the database for every instance, beside the functions
        folder's <code>.env</code>. Values are write-only: set one again to change it.
      </p>
      {q.error && <ErrorNotice error={q.error} />}
      {q.data && q.data.length === 0 && <p className="text-sm text-fg-muted">No secret yet.</p>}
      {q.data && q.data.length > 0 && (
        <ul aria-label="Secrets" className="mb-3 space-y-1 text-sm">
          {q.data.map((s) => (
            <li key={s.name} className="flex items-center gap-3">
              <span className="font-mono">{s.name}</span>
              <span className="font-mono text-fg-muted">{s.value}</span>
              {change && (
                <Button className="ml-auto" variant="danger" onClick={() => setUnsetting(s.name)}>
                  Unset {s.name}
                </Button>
              )}
            </li>
          ))}
        </ul>
      )}
      {change && (
        <form aria-label="Set a secret" onSubmit={submit} className="flex flex-wrap items-end gap-2">
          <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} placeholder="STRIPE_KEY" required />
          <Field label="Value" type="password" value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" required />
          <Button type="submit" variant="primary" disabled={set.isPending}>
            Set secret
          </Button>
        </form>
      )}
      {set.error && <ErrorNotice error={set.error} />}
      {unset.error && <ErrorNotice error={unset.error} />}
      <Confirm
        title={`Unset ${unsetting}?`}
        description="Functions that read it get undefined from their next call."
        confirm={`Unset ${unsetting}`}
        open={unsetting !== null}
        onOpenChange={(o) => !o && setUnsetting(null)}
        onConfirm={() => unsetting && unset.mutate(unsetting)}
      />
    </Card>
  );
}
