import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type GitHubFake, startGitHub } from '../../../server/test/oauth.js';
import { APP, clientOf, type E2eServer, email, record, startServer, tracker } from './server.js';

// Social sign-in through the SDK against the real server and a local GitHub-shaped provider,
// from Node: signInWithOAuth gives the start URL, the "browser" (fetch, carrying the cookie)
// follows the redirects, handleOAuthCallback reads the final fragment.

const CALLBACK_PAGE = `${APP}/oauth`;
let s: E2eServer;
let gh: GitHubFake;
const { track, disposeAll } = tracker();

beforeAll(async () => {
  gh = await startGitHub('sdk-client', 'sdk-secret');
  s = await startServer(
    { providers: { github: { enabled: true, client_id: 'sdk-client', client_secret: 'sdk-secret' } } },
    { env: { OAUTH_GITHUB_URL: gh.url, OAUTH_GITHUB_API_URL: gh.url } },
  );
});
afterAll(async () => {
  await s?.t.stop();
  await gh?.stop();
});
afterEach(() => disposeAll());

/** What a browser does between signInWithOAuth and the app's callback page. */
async function browse(startUrl: string, tamper?: (callback: URL) => void): Promise<string> {
  const started = await fetch(startUrl, { redirect: 'manual' });
  expect(started.status).toBe(302);
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0];
  const atProvider = await fetch(String(started.headers.get('location')), { redirect: 'manual' });
  // The provider sends the browser to PUBLIC_URL's callback; the harness's PUBLIC_URL is not
  // the port this server listens on, so the same path is asked of the real one.
  const callback = new URL(String(atProvider.headers.get('location')));
  tamper?.(callback);
  const back = await fetch(`${s.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie } });
  expect(back.status).toBe(302);
  return String(back.headers.get('location'));
}

describe('signInWithOAuth + handleOAuthCallback', () => {
  it('signs in with GitHub: session stored, SIGNED_IN heard, the user is the provider’s', async () => {
    const addr = email('sdk-gh');
    gh.user = { ...gh.user, id: 7_000_001, name: 'SDK Octo' };
    gh.emails = [{ email: addr, primary: true, verified: true, visibility: 'private' }];
    const client = track(clientOf(s));
    const events = record(client);
    const { data, error } = await client.auth.signInWithOAuth('github', { redirectTo: CALLBACK_PAGE });
    expect(error).toBeNull();
    const start = new URL(data?.url ?? '');
    expect(`${start.origin}${start.pathname}`).toBe(`${s.url}/v1/auth/oauth/github`);
    const landing = await browse(data?.url ?? '');
    // Back on the app's page, with this sign-in's mark in the query and the tokens in the fragment.
    expect(landing).toMatch(new RegExp(`^${CALLBACK_PAGE.replace(/[.?]/g, '\\$&')}\\?plinth_flow=[0-9a-f]{32}#access_token=`));

    const done = await client.auth.handleOAuthCallback(landing);
    expect(done.error).toBeNull();
    expect(done.data?.user).toMatchObject({ email: addr, name: 'SDK Octo' });
    expect(done.data?.user.identities.map((i) => i.provider)).toEqual(['github']);
    await events.until('SIGNED_IN');
    const session = await client.auth.getSession();
    expect(session.data?.session?.access_token).toBe(done.data?.access_token);
    // The stored session works for the user's own calls and refreshes.
    expect((await client.auth.getUser()).data?.user.email).toBe(addr);
    expect((await client.auth.refreshSession()).error).toBeNull();
  });

  it('a failed provider step comes back as {data: null, error: {code}} and stores nothing', async () => {
    const client = track(clientOf(s));
    const { data } = await client.auth.signInWithOAuth('github', { redirectTo: CALLBACK_PAGE });
    const landing = await browse(data?.url ?? '', (cb) => cb.searchParams.set('code', 'forged-code'));
    const done = await client.auth.handleOAuthCallback(landing);
    expect(done.data).toBeNull();
    expect(done.error?.code).toBe('oauth_failed');
    expect((await client.auth.getSession()).data?.session).toBeNull();
  });

  it('a provider that is off answers the start URL with 403 provider_disabled', async () => {
    const client = track(clientOf(s));
    const { data } = await client.auth.signInWithOAuth('google', { redirectTo: CALLBACK_PAGE });
    const res = await fetch(data?.url ?? '', { redirect: 'manual' });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('provider_disabled');
  });
});
