import { isLoopback, isUrlAllowed, redirectEntryProblem } from '@plinth/shared';
import { useState } from 'react';
import { SiteUrlNote } from '../../components/SiteUrl';
import { Card, Field, TextArea, Toggle } from '../../components/ui';
import { useListText } from './fields';
import { type Draft, FLOW_URLS, lines, listErrors, type Problems } from './problems';

/** The redirect allow-list (with a tester), the CORS origins and the email link pages. */
export function Urls({
  draft,
  set,
  problems,
  publicUrl,
}: {
  draft: Draft;
  set: <K extends keyof Draft>(key: K, value: Draft[K]) => void;
  problems: Problems;
  publicUrl: string;
}) {
  return (
    <div className="space-y-4">
      <Card title="Site URL">
        <p className="mb-1 font-mono text-sm" data-testid="site-url">
          {publicUrl}
        </p>
        <SiteUrlNote url={publicUrl} />
      </Card>
      <Card title="Redirect URLs and origins">
        <div className="grid gap-4 lg:grid-cols-2">
          <LinesArea
            label="Allowed redirect URLs (one per line)"
            value={draft.allowed_redirect_urls}
            onChange={(v) => set('allowed_redirect_urls', v)}
            errors={listErrors(problems, 'allowed_redirect_urls')}
            hint="Where email links and social sign-in may send users: same scheme, host and port, and the path or below it."
          />
          <LinesArea
            label="CORS origins (one per line)"
            value={draft.cors_origins}
            onChange={(v) => set('cors_origins', v)}
            errors={listErrors(problems, 'cors_origins')}
            hint="scheme://host[:port]; * as port only on localhost, 127.0.0.1 and [::1]."
          />
        </div>
        <div className="mt-4">
          <Toggle
            label="Allow pages on localhost, any port, while developing"
            checked={draft.cors_allow_localhost}
            onChange={(v) => set('cors_allow_localhost', v)}
            error={problems.cors_allow_localhost}
          />
          <p className="mt-1 text-xs text-fg-muted" data-testid="cors-localhost-note">
            {/* The server's own rule (packages/shared), so the words match what it does. */}
            {isLoopback(publicUrl)
              ? `The site URL (${publicUrl}) is a loopback address, so this counts: ${
                  draft.cors_allow_localhost
                    ? 'a page on localhost, 127.0.0.1 or [::1] on any port (a Vite dev server on :5173) may call the API without being listed above.'
                    : 'only the site URL itself and the origins listed above may call the API; a dev server on another port must be listed (http://localhost:5173, or http://localhost:*).'
                }`
              : `No effect here: the site URL (${publicUrl}) is not a loopback address, so only it and the origins listed above may call the API (list your app's origins, e.g. https://app.example.com).`}
          </p>
        </div>
        <UrlTester allowlist={draft.allowed_redirect_urls} />
      </Card>
      <Card title="Email link pages">
        <div className="grid gap-3">
          {FLOW_URLS.map(([field, label]) => (
            <Field
              key={field}
              label={label}
              type="url"
              placeholder="https://app.example.com/…"
              value={draft[field] ?? ''}
              onChange={(e) => set(field, e.target.value.trim() || null)}
              error={problems[field]}
            />
          ))}
        </div>
      </Card>
    </div>
  );
}

/** A list of one entry a line, typed as text (Enter at the end starts the next line). */
function LinesArea(props: { label: string; value: string[]; onChange: (v: string[]) => void; errors: string[]; hint: string }) {
  const [text, setText] = useListText(props.value, lines, '\n', props.onChange);
  return <TextArea label={props.label} value={text} onChange={(e) => setText(e.target.value)} errors={props.errors} hint={props.hint} />;
}

/** "Does this URL pass?": the server's own matcher (packages/shared) against the list being edited. */
function UrlTester({ allowlist }: { allowlist: string[] }) {
  const [url, setUrl] = useState('');
  const problem = url ? redirectEntryProblem(url) : null;
  const match = url && !problem ? allowlist.find((entry) => isUrlAllowed(url, [entry])) : undefined;
  return (
    <div className="mt-4 rounded-md border border-dashed border-line p-3">
      <Field
        label="Does this URL pass?"
        type="text"
        placeholder="https://app.example.com/auth/callback?x=1"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
      />
      <p role="status" className="mt-2 text-sm">
        {!url
          ? ''
          : match
            ? `Allowed: it matches ${match}.`
            : `Not allowed: ${problem ?? 'no entry has its scheme, host, port and a path it starts with'}.`}
      </p>
    </div>
  );
}
