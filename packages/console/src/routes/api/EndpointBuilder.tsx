import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { CONTROL } from '../../components/QueryControls';
import { Button, Notice, TextArea } from '../../components/ui';
import type { EndpointDoc, JsonSchema } from '../../lib/openapi';
import type { ApiSearch } from '../../lib/search';
import { authSdkCall } from './auth-sdk';
import { ResponseView, SnippetsView } from './Exchange';
import { WriteNote } from './CallerPanel';
import { usePreview } from './preview';
import { type CallSetup, type Job, type Sent, snippetsOf, tryIt } from './tryit';

/** Body fields whose values never go into the URL (a shared link must not carry them). */
const SECRET_FIELD = /password|token|code|secret/i;

/** A starting body from the schema: its required properties with an empty value of their type. */
export function bodyFromSchema(schema: JsonSchema | null): string {
  if (!schema) return '';
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : Object.keys(props).slice(0, 1);
  const sample = (s: JsonSchema | undefined) =>
    s?.type === 'boolean' ? false : s?.type === 'integer' || s?.type === 'number' ? 0 : s?.type === 'object' ? {} : '';
  return JSON.stringify(Object.fromEntries(required.map((k) => [k, sample(props[k])])), null, 2);
}

/** The body for the URL: fields that hold a password, token or code are emptied. */
function shareableBody(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return JSON.stringify(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_FIELD.test(k) ? '' : x])), null, 2);
    }
  } catch {
    return undefined;
  }
  return text;
}

/** Try-it for an endpoint outside the database REST API (the auth endpoints). */
export function EndpointBuilder(props: { endpoint: EndpointDoc; search: ApiSearch; setup: CallSetup | null; inlineKeys: boolean }) {
  const { endpoint, setup } = props;
  const navigate = useNavigate();
  const hasBody = endpoint.body !== null && endpoint.method !== 'GET';
  const [body, setBody] = useState(() => props.search.body ?? (hasBody ? bodyFromSchema(endpoint.body) : ''));
  const [params, setParams] = useState<Record<string, string>>({});
  const [sent, setSent] = useState<(Sent & { key: string }) | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  const pathParams = endpoint.params.filter((p) => p.in === 'path');
  const queryParams = endpoint.params.filter((p) => p.in === 'query');

  useEffect(() => {
    void navigate({
      to: '.',
      search: (prev: ApiSearch) => ({
        endpoint: `${endpoint.method} ${endpoint.path}`,
        as: prev.as,
        body: hasBody ? shareableBody(body) : undefined,
      }),
      replace: true,
    } as never);
  }, [body, endpoint, hasBody, navigate]);

  /** The request the fields make, or why they make none yet. */
  function jobOf(): Job | { error: string } {
    let value: unknown;
    if (hasBody) {
      try {
        value = body.trim() ? JSON.parse(body) : undefined;
      } catch (err) {
        return { error: `The body is not valid JSON: ${(err as Error).message}` };
      }
    }
    const missing = pathParams.find((p) => !params[p.name]);
    if (missing) return { error: `Give ${missing.name}.` };
    const path = endpoint.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
    const query = new URLSearchParams(queryParams.filter((p) => params[p.name]).map((p) => [p.name, params[p.name]])).toString();
    const sdk = authSdkCall(endpoint.method, endpoint.path, value, params);
    return {
      kind: 'raw',
      req: { method: endpoint.method, path, query, body: value },
      sdkCode: sdk,
      sdkNote: sdk ? 'The SDK call for this endpoint (it keeps the session it gets, and sends the token itself).' : undefined,
    };
  }
  const job = jobOf();
  const jobKey = `${JSON.stringify(job)}|${setup?.caller}|${setup?.user?.id}|${setup?.revealed}`;
  const preview = usePreview(setup, job, jobKey);

  async function run() {
    setProblem(null);
    if (!setup) return;
    if ('error' in job) return setProblem(job.error);
    const id = ++latest.current;
    const sentKey = jobKey;
    setBusy(true);
    try {
      const result = await tryIt(setup, job);
      if (id !== latest.current) return;
      if ('error' in result) setProblem(result.error);
      else setSent({ ...result, key: sentKey });
    } finally {
      if (id === latest.current) setBusy(false);
    }
  }

  // After a send, the snippets of the request sent, until an edit makes another request.
  const shown =
    sent && sent.key === jobKey
      ? { sent, title: 'Snippets of the request sent' }
      : preview.sent
        ? { sent: preview.sent, title: 'Snippets of the request as built (not sent yet)' }
        : null;
  const snippets = shown && setup ? snippetsOf(shown.sent, setup, props.inlineKeys) : null;
  return (
    <div className="space-y-4">
      <section aria-label={`Request to ${endpoint.path}`} className="space-y-3 rounded-lg border border-line bg-surface p-4">
        <p className="font-mono text-sm" data-testid="endpoint-line">
          <strong>{endpoint.method}</strong> {endpoint.path}
        </p>
        {endpoint.summary && <p className="text-sm text-fg-muted">{endpoint.summary}</p>}
        {[...pathParams, ...queryParams].map((p) => (
          <label key={p.name} className="flex flex-col gap-1 text-sm">
            <span className="font-medium">
              {p.name} {p.required ? '' : '(optional)'}
            </span>
            <input
              value={params[p.name] ?? ''}
              onChange={(e) => setParams({ ...params, [p.name]: e.target.value })}
              className={`${CONTROL} w-72 font-mono`}
            />
          </label>
        ))}
        {hasBody && <TextArea label="JSON body" rows={6} value={body} spellCheck={false} onChange={(e) => setBody(e.target.value)} />}
        {endpoint.redirect ? (
          <Notice kind="info">
            This endpoint answers with a browser redirect (social sign-in): open it in a browser, or use the SDK call below. It cannot be
            tried with fetch.
          </Notice>
        ) : (
          <>
            <Button variant="primary" onClick={() => void run()} disabled={busy || !setup}>
              {busy ? 'Sending…' : 'Send request'}
            </Button>
            <WriteNote method={endpoint.method} />
          </>
        )}
        {problem && <Notice kind="error">{problem}</Notice>}
      </section>
      {sent && <ResponseView exchange={sent.exchange} />}
      {snippets && shown ? (
        <SnippetsView title={shown.title} curl={snippets.curl} sdk={snippets.sdk} sdkNote={shown.sent.sdkNote} />
      ) : (
        <p className="text-sm text-fg-muted" data-testid="snippets-missing">
          {preview.error ? `No snippets yet: ${preview.error}` : 'Building the request…'}
        </p>
      )}
    </div>
  );
}
