import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { MailFrame } from '../../components/MailFrame';
import { Button, EmptyState, ErrorNotice, Loading, Notice, Tabs, when } from '../../components/ui';
import { api } from '../../lib/api';
import type { MessagesSearch } from '../../lib/search';

const SELECT = 'rounded-md border border-line bg-surface px-2 py-1.5 text-sm';

/** `/console/messages`: the dev inbox and the delivery log, filterable, newest first. */
export function MessagesPage() {
  const search = useSearch({ from: '/app/messages' });
  const navigate = useNavigate({ from: '/messages' });
  const view = search.view ?? 'inbox';
  const go = (patch: Partial<MessagesSearch>) => void navigate({ search: { ...search, ...patch } });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">Messages</h1>
      <Filters search={search} go={go} view={view} />
      <Tabs
        label="Message views"
        value={view}
        onChange={(v) => go({ view: v, msg: undefined, status: undefined })}
        tabs={[
          ['inbox', 'Dev inbox', <Inbox key="inbox" search={search} go={go} />],
          ['log', 'Delivery log', <Log key="log" search={search} />],
        ]}
      />
    </div>
  );
}

function Filters({ search, go, view }: { search: MessagesSearch; go: (p: Partial<MessagesSearch>) => void; view: string }) {
  const [to, setTo] = useState(search.to ?? '');
  useEffect(() => setTo(search.to ?? ''), [search.to]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    go({ to: to.trim() || undefined, msg: undefined });
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a form with the search landmark role (<search> is still new)
    <form role="search" aria-label="Filter messages" onSubmit={submit} className="flex flex-wrap items-end gap-2">
      <div className="flex flex-col gap-1 text-sm">
        <label htmlFor="filter-to">Recipient</label>
        <input
          id="filter-to"
          type="search"
          value={to}
          onChange={(e) => setTo(e.target.value)}
          placeholder="exact email or phone"
          className={`${SELECT} w-72`}
        />
      </div>
      <div className="flex flex-col gap-1 text-sm">
        <label htmlFor="filter-channel">Channel</label>
        <select
          id="filter-channel"
          className={SELECT}
          value={search.channel ?? ''}
          onChange={(e) => go({ channel: (e.target.value || undefined) as MessagesSearch['channel'], msg: undefined })}
        >
          <option value="">all</option>
          <option value="email">email</option>
          <option value="sms">sms</option>
        </select>
      </div>
      {view === 'log' && (
        <div className="flex flex-col gap-1 text-sm">
          <label htmlFor="filter-status">Status</label>
          <select
            id="filter-status"
            className={SELECT}
            value={search.status ?? ''}
            onChange={(e) => go({ status: (e.target.value || undefined) as MessagesSearch['status'] })}
          >
            <option value="">all</option>
            <option value="queued">queued</option>
            <option value="sent">sent</option>
            <option value="failed">failed</option>
          </select>
        </div>
      )}
      <Button type="submit">Filter</Button>
    </form>
  );
}

function Inbox({ search, go }: { search: MessagesSearch; go: (p: Partial<MessagesSearch>) => void }) {
  const inbox = useQuery({
    queryKey: ['inbox', search.to, search.channel],
    queryFn: () => api.inbox({ to: search.to, channel: search.channel }),
  });
  if (inbox.isLoading) return <Loading label="Loading the dev inbox" />;
  if (inbox.error) return <ErrorNotice error={inbox.error} retry={() => void inbox.refetch()} />;
  const messages = inbox.data ?? [];
  const open = messages.find((m) => m.id === search.msg) ?? null;
  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-[22rem_minmax(0,1fr)]">
      <div className="space-y-2">
        <div className="flex items-center gap-2">
          <p role="status" className="mr-auto text-sm text-fg-muted">
            {messages.length} message{messages.length === 1 ? '' : 's'}, newest first
          </p>
          <Button onClick={() => void inbox.refetch()} disabled={inbox.isFetching}>
            {inbox.isFetching ? 'Refreshing…' : 'Refresh'}
          </Button>
        </div>
        {messages.length === 0 && (
          <EmptyState title="No message yet">
            Mail lands here while no SMTP_URL is set (and SMS with SMS_PROVIDER=dev). Sign a user up, or send a test email from Auth
            settings → Email delivery, to see one.
          </EmptyState>
        )}
        <ul aria-label="Dev inbox" className="space-y-1">
          {messages.map((m) => (
            <li key={m.id}>
              <button
                type="button"
                aria-current={m.id === search.msg ? 'true' : undefined}
                onClick={() => go({ msg: m.id })}
                className="w-full rounded-md border border-line px-2 py-1.5 text-left text-sm hover:bg-muted aria-[current=true]:border-accent"
              >
                <span className="block truncate font-medium">{m.subject ?? m.text.slice(0, 60)}</span>
                <span className="block truncate text-xs text-fg-muted">
                  {m.channel} · {m.kind} · to {m.to} · {when(m.created_at)}
                </span>
              </button>
            </li>
          ))}
        </ul>
      </div>
      <div>
        {open ? (
          <article aria-label={`Message to ${open.to}`} className="space-y-2 rounded-lg border border-line bg-surface p-3">
            <h2 className="text-lg font-semibold">{open.subject ?? `${open.channel.toUpperCase()} to ${open.to}`}</h2>
            <p className="text-xs text-fg-muted">
              {open.kind} · to {open.to} · {when(open.created_at)}
            </p>
            {open.html ? <MailFrame html={open.html} title={`Email to ${open.to}`} /> : null}
            <pre className="whitespace-pre-wrap rounded-md border border-line bg-muted p-2 text-xs">{open.text}</pre>
          </article>
        ) : (
          messages.length > 0 && <Notice kind="info">Choose a message to read it.</Notice>
        )}
      </div>
    </div>
  );
}

function Log({ search }: { search: MessagesSearch }) {
  const log = useQuery({
    queryKey: ['log', search.to, search.channel, search.status],
    queryFn: () => api.messages({ to: search.to, channel: search.channel, status: search.status }),
  });
  if (log.isLoading) return <Loading label="Loading the delivery log" />;
  if (log.error) return <ErrorNotice error={log.error} retry={() => void log.refetch()} />;
  const rows = log.data ?? [];
  return (
    <div className="space-y-2">
      <div className="flex items-center gap-2">
        <p role="status" className="mr-auto text-sm text-fg-muted">
          {rows.length} entr{rows.length === 1 ? 'y' : 'ies'}, newest first
        </p>
        <Button onClick={() => void log.refetch()} disabled={log.isFetching}>
          {log.isFetching ? 'Refreshing…' : 'Refresh'}
        </Button>
      </div>
      <div className="overflow-auto rounded-md border border-line">
        <table className="w-full text-left text-sm" aria-label="Delivery log">
          <thead className="bg-muted">
            <tr>
              {['Time', 'Channel', 'Kind', 'Recipient', 'Status', 'Attempts', 'Provider answer'].map((h) => (
                <th key={h} scope="col" className="px-2 py-1">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.id} className="border-t border-line align-top">
                <td className="whitespace-nowrap px-2 py-1">{when(m.created_at)}</td>
                <td className="px-2 py-1">{m.channel}</td>
                <td className="px-2 py-1">{m.kind}</td>
                <td className="px-2 py-1">{m.to}</td>
                <td className={`px-2 py-1 ${m.status === 'failed' ? 'text-danger' : m.status === 'sent' ? 'text-ok' : ''}`}>{m.status}</td>
                <td className="px-2 py-1">{m.attempts}</td>
                <td className="max-w-[28rem] break-words px-2 py-1 font-mono text-xs">{m.last_response ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
