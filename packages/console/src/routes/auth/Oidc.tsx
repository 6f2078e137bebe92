import { MASK, oidcProviderIdProblem } from '@plinth/shared';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { Button, Card, Confirm, EmptyState, Field, Notice, Select, Toggle } from '../../components/ui';
import { ApiFailure, api, type OidcProvider } from '../../lib/api';
import { Callback, Secret, useListText } from './fields';
import { DEFAULT_SCOPES, type Draft, keepsSecret, newOidcProvider, OIDC_CODE_WORDS, type Problems } from './problems';

/** The server takes at most this many (docs/api.md, `oidc_providers`). */
const MAX_PROVIDERS = 20;
const AUTH_METHODS = [
  ['client_secret_basic', 'client_secret_basic (default)'],
  ['client_secret_post', 'client_secret_post'],
] as const;

/**
 * The `oidc_providers` of the draft (docs/oidc.md): add, edit, remove, each saved with the page's
 * one PATCH; the server's save-time refusals (unreachable, issuer mismatch, unsupported) at their
 * field; and a test sign-in of each saved provider, whose result page is `OidcTestPage`.
 */
export function OidcProviders({
  draft,
  setDraft,
  saved,
  problems,
  setProblems,
  publicUrl,
}: {
  draft: Draft;
  setDraft: (d: Draft) => void;
  /** The settings as the server has them: a test signs in with these. */
  saved: Draft;
  problems: Problems;
  setProblems: (p: Problems) => void;
  publicUrl: string;
}) {
  const list = draft.oidc_providers;
  const [removing, setRemoving] = useState<number | null>(null);
  const [added, setAdded] = useState<number | null>(null);
  const setList = (next: OidcProvider[]) => setDraft({ ...draft, oidc_providers: next });
  const full = list.length >= MAX_PROVIDERS;
  const add = () => {
    setAdded(list.length);
    setList([...list, newOidcProvider()]);
  };
  const remove = (i: number) => {
    setList(list.filter((_, j) => j !== i));
    // The server names entries by their index, which a removal shifts: those messages no longer fit.
    setProblems(Object.fromEntries(Object.entries(problems).filter(([f]) => !f.startsWith('oidc_providers'))));
    setRemoving(null);
  };
  const addButton = (
    <Button onClick={add} disabled={full} className="shrink-0 whitespace-nowrap">
      Add provider
    </Button>
  );

  return (
    <div className="space-y-4">
      <Card title="OpenID Connect providers" actions={list.length > 0 && addButton}>
        <p className="text-sm text-fg-muted">
          Any provider that speaks OpenID Connect, by its issuer: Keycloak, Authentik, Zitadel, Okta, Auth0, Entra ID (one tenant), GitLab…
          Saving asks the provider for its discovery document and keys; a test sign-in shows every claim it sends. Apps sign in with{' '}
          <code>signInWithOAuth('&lt;id&gt;')</code>.
        </p>
        {full && <p className="mt-2 text-xs text-fg-muted">At most {MAX_PROVIDERS} providers: remove one to add another.</p>}
        {problems.oidc_providers && (
          <p role="alert" className="mt-2 text-xs text-danger">
            {problems.oidc_providers}
          </p>
        )}
      </Card>
      {list.length === 0 && (
        <EmptyState title="No OpenID Connect provider yet" action={addButton}>
          Register Plinth as a confidential client (authorization code flow) at your provider, then add it here with its issuer, client ID
          and secret.
        </EmptyState>
      )}
      {list.map((p, i) => (
        <ProviderCard
          // biome-ignore lint/suspicious/noArrayIndexKey: entries are edited in place and have no id until one is typed
          key={i}
          index={i}
          provider={p}
          saved={saved.oidc_providers}
          problems={problems}
          publicUrl={publicUrl}
          autoFocus={added === i}
          onChange={(patch) => setList(list.map((q, j) => (j === i ? { ...q, ...patch } : q)))}
          onRemove={() => setRemoving(i)}
        />
      ))}
      <Confirm
        open={removing !== null}
        onOpenChange={(o) => !o && setRemoving(null)}
        title={`Remove ${labelOf(list[removing ?? 0] ?? newOidcProvider())}?`}
        description="Once you save, its sign-in button is gone and its users can no longer sign in with it (their accounts stay). Until then, Discard changes brings it back."
        confirm="Remove provider"
        onConfirm={() => removing !== null && remove(removing)}
      />
    </div>
  );
}

const labelOf = (p: OidcProvider) => p.name.trim() || p.id || 'the new provider';

const scopeList = (t: string) => t.split(/[\s,]+/).filter(Boolean);

/** Scopes as typed (space-separated), kept as a list. */
function ScopesField({ value, onChange, error }: { value: string[]; onChange: (v: string[]) => void; error?: string }) {
  const [text, setText] = useListText(value, scopeList, ' ', onChange);
  return (
    <Field
      label="Scopes"
      value={text}
      spellCheck={false}
      onChange={(e) => setText(e.target.value)}
      error={error}
      hint={
        value.includes('email') ? (
          `Separated by spaces; openid is required. Default: ${DEFAULT_SCOPES.join(' ')}.`
        ) : (
          <span className="text-warn">
            No email scope: most providers then send no email, and users get accounts without one. Default: {DEFAULT_SCOPES.join(' ')}.
          </span>
        )
      }
    />
  );
}

function ProviderCard({
  index,
  provider: p,
  saved,
  problems,
  publicUrl,
  autoFocus,
  onChange,
  onRemove,
}: {
  index: number;
  provider: OidcProvider;
  saved: readonly OidcProvider[];
  problems: Problems;
  publicUrl: string;
  autoFocus: boolean;
  onChange: (patch: Partial<OidcProvider>) => void;
  onRemove: () => void;
}) {
  const err = (field: string) => problems[`oidc_providers[${index}].${field}`];
  const stored = saved.find((s) => s.id === p.id);
  const unsaved = stored !== undefined && JSON.stringify(stored) !== JSON.stringify(p);
  const idOk = oidcProviderIdProblem(p.id) === null;
  const label = labelOf(p);
  const secretHint =
    p.client_secret === MASK
      ? keepsSecret(p, saved)
        ? 'A secret is stored; it is never shown again.'
        : 'The stored secret is kept only for the same id and issuer: type it again.'
      : undefined;

  return (
    <Card
      title={p.name.trim() || (p.id ? p.id : 'New provider')}
      actions={
        <Button variant="ghost" onClick={onRemove} aria-label={`Remove ${label}`}>
          Remove
        </Button>
      }
    >
      <div className="space-y-3">
        {problems[`oidc_providers[${index}]`] && (
          <p role="alert" className="text-xs text-danger">
            {problems[`oidc_providers[${index}]`]}
          </p>
        )}
        <Toggle
          label={`Enable ${label}`}
          checked={p.enabled}
          onChange={(v) => onChange({ enabled: v })}
          error={err('enabled')}
          reason={p.enabled ? undefined : 'Disabled: apps cannot sign in with it, but a test sign-in works.'}
        />
        <div className="grid gap-3 sm:grid-cols-2">
          <Field
            label="ID"
            value={p.id}
            autoFocus={autoFocus}
            spellCheck={false}
            autoCapitalize="off"
            placeholder="corp"
            onChange={(e) => onChange({ id: e.target.value })}
            error={err('id')}
            hint="2 to 32 lowercase letters, digits or -: the name apps use and the identities’ provider."
          />
          <Field
            label="Name"
            value={p.name}
            placeholder="Corp SSO"
            maxLength={64}
            onChange={(e) => onChange({ name: e.target.value })}
            error={err('name')}
            hint="What a sign-in button says."
          />
          <Field
            label="Issuer URL"
            className="sm:col-span-2"
            type="url"
            spellCheck={false}
            placeholder="https://sso.example.com/realms/acme"
            value={p.issuer}
            onChange={(e) => onChange({ issuer: e.target.value.trim() })}
            error={err('issuer')}
            hint="Exactly as the provider’s discovery document names it, trailing / included; https (plain http only on localhost)."
          />
          <Field
            label="Client ID"
            value={p.client_id}
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => onChange({ client_id: e.target.value })}
            error={err('client_id')}
          />
          <Secret
            label="Client secret"
            value={p.client_secret}
            onChange={(v) => onChange({ client_secret: v })}
            error={err('client_secret')}
            hint={secretHint}
          />
          <ScopesField value={p.scopes} onChange={(scopes) => onChange({ scopes })} error={err('scopes')} />
          <Select
            label="Token endpoint authentication"
            value={p.token_endpoint_auth_method}
            options={AUTH_METHODS}
            onChange={(e) => onChange({ token_endpoint_auth_method: e.target.value as OidcProvider['token_endpoint_auth_method'] })}
            error={err('token_endpoint_auth_method')}
            hint="How Plinth sends the client secret: basic in an HTTP header, post in the form body (Auth0’s default). The provider must offer it."
          />
        </div>
        {idOk ? (
          <Callback publicUrl={publicUrl} provider={p.id} />
        ) : (
          <p className="text-sm text-fg-muted">The callback URL to register at the provider appears once the ID is valid.</p>
        )}
        <TestSignIn provider={p} stored={stored} unsaved={unsaved} label={label} />
      </div>
    </Card>
  );
}

type TestState =
  | { kind: 'idle' }
  | { kind: 'starting' }
  | { kind: 'started'; provider: string; test: string; url: string; blocked: boolean }
  | { kind: 'failed'; error: unknown };

/**
 * "Test sign-in": starts a test of the saved provider and opens its sign-in page in a new tab
 * (opened at the click, so no popup blocker stops it, then sent to the provider without
 * `opener`); that tab comes back to the result page. This tab keeps the draft.
 */
function TestSignIn({
  provider: p,
  stored,
  unsaved,
  label,
}: {
  provider: OidcProvider;
  stored: OidcProvider | undefined;
  unsaved: boolean;
  label: string;
}) {
  const [state, setState] = useState<TestState>({ kind: 'idle' });
  async function start(id: string) {
    const tab = window.open('', '_blank');
    if (tab) {
      tab.opener = null;
      tab.document.title = 'Test sign-in';
      tab.document.body.textContent = `Starting the test sign-in of ${label}…`;
    }
    setState({ kind: 'starting' });
    try {
      const t = await api.startOidcTest(id);
      if (tab && !tab.closed) tab.location.replace(t.url);
      setState({ kind: 'started', provider: id, test: t.test_id, url: t.url, blocked: !tab || tab.closed });
    } catch (error) {
      tab?.close();
      setState({ kind: 'failed', error });
    }
  }

  if (!stored)
    return (
      <div className="rounded-md border border-dashed border-line p-3 text-sm">
        <Button disabled aria-describedby={`test-why-${p.id || 'new'}`}>
          Test sign-in
        </Button>
        <p id={`test-why-${p.id || 'new'}`} className="mt-1 text-xs text-fg-muted">
          Save the provider first: a test signs in with the saved settings.
        </p>
      </div>
    );
  const failure = state.kind === 'failed' && state.error instanceof ApiFailure ? state.error : null;
  return (
    <div className="space-y-2 rounded-md border border-dashed border-line p-3 text-sm">
      <div className="flex flex-wrap items-center gap-2">
        <Button onClick={() => void start(stored.id)} disabled={state.kind === 'starting'} aria-label={`Test sign-in with ${label}`}>
          {state.kind === 'starting' ? 'Starting…' : 'Test sign-in'}
        </Button>
        <span className="text-xs text-fg-muted">
          Opens {label}’s sign-in page in a new tab; sign in there to see every claim it sends. Nobody is signed in to the project.
        </span>
      </div>
      {unsaved && (
        <p className="text-xs text-warn" data-testid="test-uses-saved">
          This provider has unsaved changes: the test uses the saved settings.
        </p>
      )}
      {state.kind === 'started' && state.provider === stored.id && (
        <Notice kind="info">
          {state.blocked ? (
            <>
              The browser blocked the new tab:{' '}
              <a href={state.url} target="_blank" rel="noopener noreferrer" className="text-accent underline">
                open {label}’s sign-in page
              </a>
              .{' '}
            </>
          ) : (
            <>A new tab opened at {label}’s sign-in page: sign in there, and that tab shows the result. </>
          )}
          <Link to="/auth/oidc-test" search={{ provider: state.provider, test: state.test }} className="text-accent underline">
            See the result here
          </Link>
          .
        </Notice>
      )}
      {state.kind === 'failed' && (
        <Notice kind="error" title={(failure && OIDC_CODE_WORDS[failure.code]) ?? 'The test sign-in could not start'}>
          <p>{failure?.unreachable ? 'No answer from the server: is it running?' : (failure?.message ?? String(state.error))}</p>
          {failure?.code && !failure.unreachable && <p className="text-xs text-fg-muted">code: {failure.code}</p>}
        </Notice>
      )}
    </div>
  );
}
