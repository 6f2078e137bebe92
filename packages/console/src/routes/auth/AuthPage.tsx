import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { Button, ErrorNotice, Loading, Notice, Tabs } from '../../components/ui';
import { ApiFailure, api } from '../../lib/api';
import { AUTH_SECTIONS } from '../../lib/search';
import { projectQuery } from '../../lib/queries';
import { useRights } from '../../lib/roles';
import { Delivery, Templates } from './Emails';
import { Methods } from './Methods';
import { OidcProviders } from './Oidc';
import { type Draft, fieldLabel, localProblems, managedOf, type Problems, problemsOf } from './problems';
import { Providers } from './Providers';
import { Security } from './Security';
import { Urls } from './Urls';

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
  // A viewer reads the settings only: no Save, every field disabled (the server would refuse the PATCH).
  const { change } = useRights();
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
        setProblems(problemsOf(err.details as Array<{ field: string; message: string; code?: string }>));
      } else setProblems({});
    },
  });

  if (settings.isLoading) return <Loading label="Loading the auth settings" />;
  if (settings.error) return <ErrorNotice error={settings.error} retry={() => void settings.refetch()} />;
  if (!draft || !settings.data) return null;
  const saved = settings.data;
  const managed = managedOf(saved);

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const local = localProblems(draft, saved);
    if (Object.keys(local).length) {
      save.reset();
      setProblems(local);
      return;
    }
    save.mutate(draft);
  };

  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Auth settings">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Auth settings</h1>
        {change && (
          <>
            <Button
              type="button"
              onClick={() => {
                setDraft(structuredClone(saved));
                setProblems({});
                save.reset();
              }}
            >
              Discard changes
            </Button>
            <Button type="submit" variant="primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save settings'}
            </Button>
          </>
        )}
      </div>
      {managed.keys.length > 0 && (
        <Notice kind="info" title={`Kept in ${managed.file ?? 'the project file'}`}>
          <p>These settings come from the project file and are applied at every start: change them there. The others are saved here.</p>
          <p className="mt-1" data-testid="managed-keys">
            {managed.keys.map((k, i) => (
              <span key={k}>
                {i > 0 && ', '}
                <code>{k}</code>
              </span>
            ))}
          </p>
        </Notice>
      )}
      {save.isSuccess && <Notice kind="ok">Settings saved.</Notice>}
      {Object.keys(problems).length > 0 && (
        <Notice kind="error" title="Nothing was saved">
          <ul className="list-disc pl-5">
            {Object.entries(problems).map(([f, m]) => (
              <li key={f}>
                {f.startsWith('oidc_providers') ? <span className="font-medium">{fieldLabel(f, draft)} —</span> : <code>{f}</code>} {m}
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
          {
            methods: 'Methods',
            security: 'MFA and passkeys',
            urls: 'URLs',
            providers: 'Social providers',
            oidc: 'OpenID Connect',
            templates: 'Email templates',
            delivery: 'Email delivery',
          }[s],
          // A disabled fieldset disables every field, switch and button of the section at once.
          <fieldset key={s} disabled={!change} className="min-w-0">
            {
              {
                methods: <Methods draft={draft} set={set} problems={problems} project={project.data} />,
                security: <Security draft={draft} set={set} problems={problems} publicUrl={project.data?.public_url ?? ''} />,
                urls: <Urls draft={draft} set={set} problems={problems} publicUrl={project.data?.public_url ?? ''} />,
                providers: <Providers draft={draft} setDraft={setDraft} problems={problems} publicUrl={project.data?.public_url ?? ''} />,
                oidc: (
                  <OidcProviders
                    draft={draft}
                    setDraft={setDraft}
                    saved={saved}
                    problems={problems}
                    setProblems={setProblems}
                    publicUrl={project.data?.public_url ?? ''}
                  />
                ),
                templates: <Templates draft={draft} setDraft={setDraft} />,
                delivery: <Delivery project={project.data} />,
              }[s]
            }
          </fieldset>,
        ])}
      />
    </form>
  );
}
