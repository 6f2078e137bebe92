import { useState } from 'react';
import { CopyButton, Notice, Tabs } from '../../components/ui';
import type { Exchange } from './callers';

/** The answer of a try-it: status, elapsed time, the headers that matter, all headers, the body. */
export function ResponseView({ exchange }: { exchange: Exchange }) {
  if (exchange.failure) {
    return (
      <Notice kind="error" title="No answer">
        The request did not reach the server ({exchange.failure}). Is it running?
      </Notice>
    );
  }
  const header = (name: string) => exchange.headers.find(([k]) => k === name)?.[1];
  const ok = exchange.status >= 200 && exchange.status < 300;
  let pretty = exchange.text;
  let error: { code?: string; message?: string } | null = null;
  try {
    const parsed = JSON.parse(exchange.text) as unknown;
    pretty = JSON.stringify(parsed, null, 2);
    if (!ok && parsed && typeof parsed === 'object') error = parsed as { code?: string; message?: string };
  } catch {
    // Not JSON (an empty 204): shown as it came.
  }
  const timing = header('server-timing');
  return (
    <section aria-label="Response" className="space-y-2 rounded-lg border border-line bg-surface p-4">
      <h2 className="text-base font-semibold">Response</h2>
      <p role="status" className="flex flex-wrap items-center gap-3 text-sm">
        <span
          data-testid="response-status"
          className={`rounded px-2 py-0.5 font-mono font-semibold ${ok ? 'bg-ok/15 text-ok' : 'bg-danger/15 text-danger'}`}
        >
          {exchange.status} {exchange.statusText}
        </span>
        <span data-testid="response-elapsed">{exchange.elapsedMs.toFixed(0)} ms</span>
        {error?.code && (
          <span>
            <code data-testid="response-code">{error.code}</code>: {error.message}
          </span>
        )}
      </p>
      <dl className="grid grid-cols-[9rem_1fr] gap-x-3 gap-y-1 text-xs">
        <dt className="text-fg-muted">Content-Range</dt>
        <dd className="font-mono" data-testid="content-range">
          {header('content-range') ?? '—'}
        </dd>
        <dt className="text-fg-muted">Server-Timing</dt>
        <dd className="font-mono break-all" data-testid="server-timing">
          {timing ? timing.split(/,\s*/).join(' · ') : '—'}
        </dd>
      </dl>
      <details className="text-xs">
        <summary className="cursor-pointer text-fg-muted">All response headers ({exchange.headers.length})</summary>
        <ul className="mt-1 font-mono">
          {exchange.headers.map(([k, v]) => (
            <li key={k} className="break-all">
              {k}: {v}
            </li>
          ))}
        </ul>
      </details>
      <pre
        data-testid="response-body"
        className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded-md border border-line bg-muted p-2 font-mono text-xs"
      >
        {pretty || '(no body)'}
      </pre>
    </section>
  );
}

/** The cURL and SDK snippets of a request (sent, or as built), each with a copy button. */
export function SnippetsView({ curl, sdk, sdkNote, title }: { curl: string; sdk: string; sdkNote?: string; title: string }) {
  const [tab, setTab] = useState<'curl' | 'sdk'>('curl');
  const block = (label: string, text: string, testid: string) => (
    <div className="space-y-2">
      <div className="flex justify-end">
        <CopyButton value={text} label={`Copy the ${label} snippet`} />
      </div>
      <pre
        data-testid={testid}
        className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded-md border border-line bg-muted p-3 font-mono text-xs"
      >
        {text}
      </pre>
    </div>
  );
  return (
    <section aria-label="Snippets" className="rounded-lg border border-line bg-surface p-4">
      <h2 className="mb-2 text-base font-semibold" data-testid="snippets-title">
        {title}
      </h2>
      <Tabs
        label="Snippet language"
        value={tab}
        onChange={setTab}
        tabs={[
          ['curl', 'cURL', block('cURL', curl, 'snippet-curl')],
          [
            'sdk',
            'SDK',
            <div key="sdk" className="space-y-2">
              {sdkNote && <p className="text-xs text-fg-muted">{sdkNote}</p>}
              {block('SDK', sdk, 'snippet-sdk')}
            </div>,
          ],
        ]}
      />
    </section>
  );
}
