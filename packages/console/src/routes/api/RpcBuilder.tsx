import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { CONTROL } from '../../components/QueryControls';
import { Button, Notice } from '../../components/ui';
import type { FunctionDoc } from '../../lib/openapi';
import type { ApiSearch } from '../../lib/search';
import { ResponseView, SnippetsView } from './Exchange';
import { WriteNote } from './CallerPanel';
import { usePreview } from './preview';
import { emptyFields, planRpc } from './rpc';
import { type CallSetup, type Job, type Sent, snippetsOf, tryIt } from './tryit';

/** Argument values that never go into the URL (a shared link must not carry them). */
const SECRET_ARG = /password|token|code|secret/i;

/** The fields as the URL keeps them (as typed; secret-looking ones left out). */
function fieldsFrom(text: string | undefined, fn: FunctionDoc, ov: number): Record<string, string> {
  const start = emptyFields(fn, ov);
  try {
    const v = text ? (JSON.parse(text) as unknown) : null;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) if (k in start && typeof x === 'string') start[k] = x;
    }
  } catch {
    // A hand-edited URL: start empty.
  }
  return start;
}

/**
 * Try-it for a function (`/api/v1/rpc/{fn}`): a field per argument of the chosen overload,
 * POST (or GET for a stable function), a limit for one returning a set; the call is the SDK's
 * `client.rpc()`, as the snippet shows it, before and after sending.
 */
export function RpcBuilder(props: { fn: FunctionDoc; search: ApiSearch; setup: CallSetup | null; inlineKeys: boolean }) {
  const { fn, setup } = props;
  const navigate = useNavigate();
  const [ov, setOv] = useState(() => Math.min(props.search.ov ?? 0, fn.overloads.length - 1));
  const overload = fn.overloads[ov];
  const [fields, setFields] = useState(() => fieldsFrom(props.search.body, fn, ov));
  const [get, setGet] = useState(props.search.get === true && fn.get);
  const [limit, setLimit] = useState(props.search.limit === undefined ? '' : String(props.search.limit));
  const [sent, setSent] = useState<(Sent & { key: string }) | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);

  useEffect(() => {
    const shareable = Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== '' && !SECRET_ARG.test(k)));
    void navigate({
      to: '.',
      search: (prev: ApiSearch) => ({
        fn: fn.name,
        ov: ov || undefined,
        get: get || undefined,
        limit: /^\d+$/.test(limit) ? Number(limit) : undefined,
        body: Object.keys(shareable).length ? JSON.stringify(shareable) : undefined,
        as: prev.as,
      }),
      replace: true,
    } as never);
  }, [fields, get, limit, ov, fn.name, navigate]);

  const limitValue = /^\d+$/.test(limit) ? Number(limit) : undefined;
  const planned = planRpc(overload, { fields, get, limit: limitValue }, fn.get);
  const job: Job | { error: string } = 'error' in planned ? planned : { kind: 'rpc', fn: fn.name, plan: planned.plan };
  const jobKey = `${JSON.stringify(job)}|${setup?.caller}|${setup?.user?.id}|${setup?.revealed}`;
  const preview = usePreview(setup, job, jobKey);

  async function run() {
    setProblem(null);
    if (!setup) return;
    if ('error' in job) return setProblem(job.error);
    const id = ++latest.current;
    setBusy(true);
    try {
      const result = await tryIt(setup, job);
      if (id !== latest.current) return;
      if ('error' in result) setProblem(result.error);
      else setSent({ ...result, key: jobKey });
    } finally {
      if (id === latest.current) setBusy(false);
    }
  }

  const shown =
    sent && sent.key === jobKey
      ? { sent, title: 'Snippets of the request sent' }
      : preview.sent
        ? { sent: preview.sent, title: 'Snippets of the request as built (not sent yet)' }
        : null;
  const snippets = shown && setup ? snippetsOf(shown.sent, setup, props.inlineKeys) : null;
  return (
    <div className="space-y-4">
      <section aria-label={`Call ${fn.name}`} className="space-y-3 rounded-lg border border-line bg-surface p-4">
        <p className="font-mono text-sm" data-testid="endpoint-line">
          <strong>{get ? 'GET' : 'POST'}</strong> /api/v1/rpc/{fn.name}
        </p>
        {fn.description && <p className="text-sm text-fg-muted">{fn.description}</p>}
        {fn.overloads.length > 1 ? (
          <label className="flex flex-col gap-1 text-sm">
            <span className="font-medium">Overload</span>
            <select
              value={ov}
              onChange={(e) => {
                const next = Number(e.target.value);
                setOv(next);
                setFields(emptyFields(fn, next));
              }}
              className={`${CONTROL} w-full max-w-xl font-mono`}
            >
              {fn.overloads.map((o, i) => (
                <option key={o.signature} value={i}>
                  {o.signature}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <p className="break-words font-mono text-xs text-fg-muted">{overload.signature}</p>
        )}
        {overload.args.length === 0 && <p className="text-sm text-fg-muted">No arguments.</p>}
        {overload.args.map((a, i) => (
          <div key={a.name} className="flex flex-col gap-1 text-sm">
            <label htmlFor={`rpc-arg-${i}`}>
              <span className="font-medium font-mono">{a.name}</span>{' '}
              <span className="text-xs text-fg-muted">
                {a.type}
                {a.required ? '' : ', optional (empty: its default)'}
                {a.kind === 'array' || a.kind === 'object' || a.kind === 'json' ? ', as JSON' : ''}
              </span>
            </label>
            {a.kind === 'boolean' ? (
              <select
                id={`rpc-arg-${i}`}
                value={fields[a.name] ?? ''}
                onChange={(e) => setFields({ ...fields, [a.name]: e.target.value })}
                className={`${CONTROL} w-32`}
              >
                {!a.required && <option value="">(default)</option>}
                {a.required && !fields[a.name] && <option value="">choose</option>}
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            ) : (
              <input
                id={`rpc-arg-${i}`}
                value={fields[a.name] ?? ''}
                inputMode={a.kind === 'integer' || a.kind === 'number' ? 'decimal' : undefined}
                onChange={(e) => setFields({ ...fields, [a.name]: e.target.value })}
                className={`${CONTROL} w-full max-w-md font-mono`}
              />
            )}
          </div>
        ))}
        <div className="flex flex-wrap items-end gap-4">
          {fn.get && (
            <label className="inline-flex items-center gap-1.5 pb-1 text-sm">
              <input type="checkbox" checked={get} onChange={(e) => setGet(e.target.checked)} />
              Call with GET (arguments in the URL, as text)
            </label>
          )}
          {overload.set && (
            <label className="flex flex-col gap-1 text-sm">
              <span className="font-medium">Limit</span>
              <input
                inputMode="numeric"
                value={limit}
                placeholder="100"
                onChange={(e) => setLimit(e.target.value)}
                className={`${CONTROL} w-24`}
              />
            </label>
          )}
        </div>
        <Button variant="primary" onClick={() => void run()} disabled={busy || !setup}>
          {busy ? 'Sending…' : 'Send request'}
        </Button>
        <WriteNote method={get ? 'GET' : 'POST'} />
        {problem && <Notice kind="error">{problem}</Notice>}
      </section>
      {sent && <ResponseView exchange={sent.exchange} />}
      {snippets && shown ? (
        <SnippetsView title={shown.title} curl={snippets.curl} sdk={snippets.sdk} />
      ) : (
        <p className="text-sm text-fg-muted" data-testid="snippets-missing">
          {preview.error ? `No snippets yet: ${preview.error}` : 'Building the request…'}
        </p>
      )}
    </div>
  );
}
