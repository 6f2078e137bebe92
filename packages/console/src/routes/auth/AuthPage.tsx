import { isUrlAllowed, redirectEntryProblem } from '@plinth/shared';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { Button, Card, ErrorNotice, Field, Loading, Notice, Tabs, TextArea, Toggle } from '../../components/ui';
import { ApiFailure, type AuthSettings, api } from '../../lib/api';
import { AUTH_SECTIONS } from '../../lib/search';
import { projectQuery } from '../../router';
import { Delivery, Templates } from './Emails';
import { Providers } from './Providers';

export type Draft = AuthSettings;
export type Problems = Record<string, string>;
const FLOW_URLS = [
  ['email_verification_url', 'Email verification page'],
  ['password_reset_url', 'Password reset page'],
  ['magic_link_url', 'Magic link page'],
] as const;

const lines = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** Problems of a list field (`cors_origins[1]` → "line 2: …"), for the textarea that holds it. */
const listErrors = (problems: Problems, field: string) =>
  Object.entries(problems)
    .filter(([k]) => k === field || k.startsWith(`${field}[`))
    .map(([k, m]) => {
      const i = /\[(\d+)\]$/.exec(k);
      return i ? `Line ${Number(i[1]) + 1}: ${m}` : m;
    });

/** What the console refuses before asking the server (the spec: "the console blocks the save"). */
function localProblems(d: Draft): Problems {
  const out: Problems = {};
  d.allowed_redirect_urls.forEach((u, i) => {
    const p = redirectEntryProblem(u);
    if (p) out[`allowed_redirect_urls[${i}]`] = p;
  });
  for (const [field] of FLOW_URLS) {
    const v = d[field];
    if (v && !isUrlAllowed(v, d.allowed_redirect_urls))
      out[field] = 'is not allowed by the redirect URLs above: add it (or its site) there first';
  }
  if (d.require_email_confirmation && !d.email_verification_url) out.email_verification_url = 'is required while email confirmation is on';
  return out;
}

/**
 * `/console/auth`: every auth setting of docs/api.md §4. One draft, saved with one PATCH; the
 * server's `details[].field` messages appear at their fields and nothing is saved on refusal.
 * Secrets are write-only: the server sends a mask, and only a typed value replaces it.
 */
export function AuthPage() {
  const { section = 'methods' } = useSearch({ from: '/app/auth' });
  const navigate = useNavigate({ from: '/auth' });
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: api.settings });
  const project = useQuery(projectQuery);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [problems, setProblems] = useState<Problems>({});
  useEffect(() => {
    if (settings.data && !draft) setDraft(structuredClone(settings.data));
  }, [settings.data, draft]);

  const save = useMutation({
    mutationFn: (d: Draft) => api.saveSettings(d),
    onSuccess: (saved) => {
      queryClient.setQueryData(['settings'], saved);
      setDraft(structuredClone(saved));
      setProblems({});
    },
    onError: (err) => {
      if (err instanceof ApiFailure && Array.isArray(err.details)) {
        setProblems(Object.fromEntries((err.details as Array<{ field: string; message: string }>).map((p) => [p.field, p.message])));
      } else setProblems({});
    },
  });

  if (settings.isLoading) return <Loading label="Loading the auth settings" />;
  if (settings.error) return <ErrorNotice error={settings.error} retry={() => void settings.refetch()} />;
  if (!draft) return null;

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const free = project.data?.plan === 'free';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const local = localProblems(draft);
    if (Object.keys(local).length) {
      save.reset();
      setProblems(local);
      return;
    }
    save.mutate(draft);
  };

  const methods = (
    <Card title="Sign-in methods">
      <div className="grid gap-3 sm:grid-cols-2">
        <Toggle
          label="Email and password"
          checked={draft.email_password_enabled}
          onChange={(v) => set('email_password_enabled', v)}
          error={problems.email_password_enabled}
        />
        <Toggle
          label="Magic links"
          checked={draft.magic_link_enabled}
          onChange={(v) => set('magic_link_enabled', v)}
          error={problems.magic_link_enabled}
        />
        <Toggle
          label="Phone (SMS codes)"
          checked={draft.phone_enabled}
          onChange={(v) => set('phone_enabled', v)}
          disabled={free && !draft.phone_enabled}
          reason={
            free
              ? 'Phone sign-in needs a paid plan (Pro or above); this project is on Free.'
              : project.data && !project.data.sms_configured
                ? 'No SMS provider is configured on the server (SMS_PROVIDER): codes cannot be sent yet.'
                : undefined
          }
          error={problems.phone_enabled}
        />
        <Toggle
          label="Require email confirmation"
          checked={draft.require_email_confirmation}
          onChange={(v) => set('require_email_confirmation', v)}
          error={problems.require_email_confirmation}
        />
        <Field
          label="Minimum password length"
          type="number"
          min={8}
          max={128}
          value={draft.min_password_length}
          onChange={(e) => set('min_password_length', Number(e.target.value))}
          error={problems.min_password_length}
          hint="8 to 128 characters."
        />
        <Field
          label="Session duration (seconds)"
          type="number"
          min={3600}
          max={2592000}
          value={draft.session_duration_seconds}
          onChange={(e) => set('session_duration_seconds', Number(e.target.value))}
          error={problems.session_duration_seconds}
          hint="Lifetime of access tokens: 3600 (1 hour) to 2592000 (30 days)."
        />
      </div>
    </Card>
  );

  const urls = (
    <div className="space-y-4">
      <Card title="Redirect URLs and origins">
        <div className="grid gap-4 lg:grid-cols-2">
          <TextArea
            label="Allowed redirect URLs (one per line)"
            value={draft.allowed_redirect_urls.join('\n')}
            onChange={(e) => set('allowed_redirect_urls', lines(e.target.value))}
            errors={listErrors(problems, 'allowed_redirect_urls')}
            hint="Where email links and social sign-in may send users: same scheme, host and port, and the path or below it."
          />
          <TextArea
            label="CORS origins (one per line)"
            value={draft.cors_origins.join('\n')}
            onChange={(e) => set('cors_origins', lines(e.target.value))}
            errors={listErrors(problems, 'cors_origins')}
            hint="scheme://host[:port]; * as port only on localhost, 127.0.0.1 and [::1]."
          />
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

  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Auth settings">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Auth settings</h1>
        <Button
          type="button"
          onClick={() => {
            setDraft(structuredClone(settings.data as Draft));
            setProblems({});
            save.reset();
          }}
        >
          Discard changes
        </Button>
        <Button type="submit" variant="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save settings'}
        </Button>
      </div>
      {save.isSuccess && <Notice kind="ok">Settings saved.</Notice>}
      {Object.keys(problems).length > 0 && (
        <Notice kind="error" title="Nothing was saved">
          <ul className="list-disc pl-5">
            {Object.entries(problems).map(([f, m]) => (
              <li key={f}>
                <code>{f}</code> {m}
              </li>
            ))}
          </ul>
        </Notice>
      )}
      {save.error && !(save.error instanceof ApiFailure && Array.isArray(save.error.details)) && <ErrorNotice error={save.error} />}
      <Tabs
        label="Auth settings sections"
        value={section}
        onChange={(s) => void navigate({ search: { section: s }, replace: true })}
        tabs={AUTH_SECTIONS.map((s) => [
          s,
          { methods: 'Methods', urls: 'URLs', providers: 'Social providers', templates: 'Email templates', delivery: 'Email delivery' }[s],
          {
            methods,
            urls,
            providers: <Providers draft={draft} setDraft={setDraft} problems={problems} publicUrl={project.data?.public_url ?? ''} />,
            templates: <Templates draft={draft} setDraft={setDraft} />,
            delivery: <Delivery project={project.data} />,
          }[s],
        ])}
      />
    </form>
  );
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
