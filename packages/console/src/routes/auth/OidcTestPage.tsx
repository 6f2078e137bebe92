import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useSearch } from '@tanstack/react-router';
import { Button, Card, ErrorNotice, Loading, Notice } from '../../components/ui';
import { ApiFailure, api, type OidcTestResult } from '../../lib/api';
import { OIDC_CODE_WORDS } from './problems';

/** What each claim sign-in needs means when the provider did not send it (docs/oidc.md §3). */
const MISSING: Record<OidcTestResult['missing'][number], string> = {
  sub: 'the user’s identifier at the provider: without it nobody can sign in.',
  email:
    'the user’s email address: without it, users get accounts without an email. Ask for the email scope, and let the provider release the address.',
  email_verified:
    'whether the provider checked the email: without it, the email is never trusted, so a user is never linked to an existing account with that email (they get an account of their own).',
};
const SOURCE: Record<OidcTestResult['claims'][number]['source'], string> = { id_token: 'ID token', userinfo: 'userinfo endpoint' };

/** While the provider's callback has not run yet, the result is asked again this often. */
const PENDING_POLL_MS = 1500;

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
/** Claims that are times (seconds since 1970, RFC 7519 §4.1, OpenID Connect Core §2): shown as a date too. */
const TIMES = new Set(['exp', 'iat', 'nbf', 'auth_time', 'updated_at']);

/**
 * `/console/auth/oidc-test?provider=&test=`: where a test sign-in lands (the server's callback
 * sends the browser here). Every claim received with its source, the needed ones that are
 * missing, named and explained, the profile a sign-in would use, or why the test failed.
 */
export function OidcTestPage() {
  const { provider = '', test = '' } = useSearch({ from: '/app/auth/oidc-test' });
  const result = useQuery({
    queryKey: ['oidc-test', provider, test],
    queryFn: () => api.oidcTestResult(provider, test),
    enabled: Boolean(provider && test),
    refetchInterval: (q) => (q.state.data?.status === 'pending' ? PENDING_POLL_MS : false),
  });
  const settings = useQuery({ queryKey: ['settings'], queryFn: api.settings });
  const name = settings.data?.oidc_providers.find((p) => p.id === provider)?.name ?? provider;
  // Again, in this tab: nothing is lost here, the provider comes back to a new result page.
  const again = useMutation({
    mutationFn: () => api.startOidcTest(provider),
    onSuccess: (t) => window.location.assign(t.url),
  });
  const r = result.data;

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">Test sign-in{provider ? `: ${name}` : ''}</h1>
        <Link to="/auth" search={{ section: 'oidc' }} className="text-sm text-accent underline">
          Back to the OpenID Connect providers
        </Link>
        {provider && (
          <Button onClick={() => again.mutate()} disabled={again.isPending || again.isSuccess}>
            {again.isPending || again.isSuccess ? 'Starting…' : 'Test again'}
          </Button>
        )}
      </div>
      {again.error && (
        <Notice
          kind="error"
          title={(again.error instanceof ApiFailure && OIDC_CODE_WORDS[again.error.code]) || 'The test sign-in could not start'}
        >
          {again.error.message}
        </Notice>
      )}
      {!provider || !test ? (
        <Notice kind="error" title="No test sign-in named">
          This page shows the result of a test sign-in: start one from Auth settings → OpenID Connect → Test sign-in.
        </Notice>
      ) : result.isLoading ? (
        <Loading label="Loading the test’s result" />
      ) : result.error ? (
        result.error instanceof ApiFailure && result.error.code === 'not_found' ? (
          <Notice kind="error" title="No such test sign-in">
            Results are kept one hour. Start a new test with Test again.
          </Notice>
        ) : (
          <ErrorNotice error={result.error} retry={() => void result.refetch()} />
        )
      ) : r ? (
        <Result r={r} />
      ) : null}
    </div>
  );
}

function Result({ r }: { r: OidcTestResult }) {
  return (
    <>
      <p className="text-sm text-fg-muted">
        Issuer <code className="break-all">{r.issuer}</code> · started {new Date(r.created_at).toLocaleString()}
        {r.completed_at && ` · finished ${new Date(r.completed_at).toLocaleString()}`}
      </p>
      {r.status === 'pending' && (
        <Notice kind="info" title="Waiting for the sign-in at the provider">
          Sign in on the provider’s page (the tab it opened); this page shows the result as soon as the provider sends the browser back.
        </Notice>
      )}
      {r.status === 'failed' && (
        <Notice kind="error" title="The test sign-in failed">
          <p>{r.error?.message ?? 'The provider sent no reason.'}</p>
          {r.error?.code && <p className="text-xs text-fg-muted">code: {r.error.code}</p>}
        </Notice>
      )}
      {r.status === 'done' &&
        (r.missing.length > 0 ? (
          <Notice kind="warn" title={`Missing: ${r.missing.join(', ')}`}>
            <ul className="mt-1 list-disc space-y-1 pl-5">
              {r.missing.map((m) => (
                <li key={m} data-testid={`missing-${m}`}>
                  <code className="font-semibold">{m}</code>: {MISSING[m]}
                </li>
              ))}
            </ul>
          </Notice>
        ) : (
          <Notice kind="ok" title="Everything sign-in needs was sent">
            sub, email and email_verified came from the provider.
          </Notice>
        ))}
      {r.profile && (
        <Card title="What a sign-in would use">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
            <dt className="text-fg-muted">Identity</dt>
            <dd className="break-all font-mono">{r.profile.subject}</dd>
            <dt className="text-fg-muted">Email</dt>
            <dd className="break-all">{r.profile.email ?? '— none'}</dd>
            <dt className="text-fg-muted">Email verified</dt>
            <dd data-testid="profile-verified">
              {r.profile.email_verified
                ? 'Yes: the user is linked to an existing account with this email'
                : 'No: never linked to an existing account by email'}
            </dd>
            <dt className="text-fg-muted">Name</dt>
            <dd>{r.profile.name ?? '—'}</dd>
            <dt className="text-fg-muted">Avatar</dt>
            <dd className="break-all">{r.profile.avatar ?? '—'}</dd>
          </dl>
        </Card>
      )}
      {(r.status === 'done' || r.claims.length > 0) && (
        <Card title={`Claims received (${r.claims.length})`}>
          {r.claims.length === 0 ? (
            <p className="text-sm text-fg-muted">None.</p>
          ) : (
            // On a phone the source goes under the claim's name, leaving the width to the values.
            <table className="w-full table-fixed text-left text-sm sm:table-auto">
              <caption className="sr-only">Every claim the provider sent, with where it came from</caption>
              <thead className="text-fg-muted">
                <tr>
                  <th scope="col" className="w-[9.5rem] py-1 pr-3 font-medium sm:w-auto sm:pr-4">
                    Claim
                  </th>
                  <th scope="col" className="py-1 pr-4 font-medium">
                    Value
                  </th>
                  <th scope="col" className="hidden py-1 font-medium sm:table-cell">
                    Source
                  </th>
                </tr>
              </thead>
              <tbody>
                {r.claims.map((c) => (
                  <tr key={`${c.source}:${c.name}`} className="border-t border-line align-top">
                    <th scope="row" className="break-words py-1 pr-3 font-normal sm:pr-4">
                      <span className="font-mono">{c.name}</span>
                      <span className="block text-xs text-fg-muted sm:hidden">{SOURCE[c.source]}</span>
                    </th>
                    <td className="break-all py-1 pr-4 font-mono">
                      {shown(c.value)}
                      {TIMES.has(c.name) && typeof c.value === 'number' && (
                        <span className="block font-sans text-xs text-fg-muted sm:ml-2 sm:inline">
                          {new Date(c.value * 1000).toLocaleString()}
                        </span>
                      )}
                    </td>
                    <td className="hidden whitespace-nowrap py-1 text-fg-muted sm:table-cell">{SOURCE[c.source]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Card>
      )}
    </>
  );
}
