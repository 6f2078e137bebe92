import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeServer, makeUser, startFakeServer } from '../../test/fake-server.js';
import { clientOf } from '../../test/helpers.js';
import { parseOAuthFragment, stripFragment } from './fragment.js';

describe('parseOAuthFragment', () => {
  it.each([
    [
      'tokens',
      'https://app.example.com/cb#access_token=a.b.c&refresh_token=r1&token_type=bearer&expires_in=3600',
      { kind: 'tokens', access_token: 'a.b.c', refresh_token: 'r1', token_type: 'bearer', expires_in: 3600, type: null },
    ],
    [
      'tokens in a bare hash, encoded',
      '#access_token=a%2Bb&refresh_token=r&expires_in=60&type=recovery',
      { kind: 'tokens', access_token: 'a+b', refresh_token: 'r', token_type: 'bearer', expires_in: 60, type: 'recovery' },
    ],
    [
      'missing lifetime counts as expired',
      '#access_token=a&refresh_token=r&expires_in=soon',
      { kind: 'tokens', access_token: 'a', refresh_token: 'r', token_type: 'bearer', expires_in: 0, type: null },
    ],
    [
      'error with description',
      '#error=redirect_not_allowed&error_description=The+redirect+URL+is+not+allowed.',
      { kind: 'error', error: 'redirect_not_allowed', error_description: 'The redirect URL is not allowed.' },
    ],
    ['error without description', '#error=access_denied', { kind: 'error', error: 'access_denied', error_description: 'access_denied' }],
    ['no fragment', 'https://app.example.com/cb?token=x', { kind: 'none' }],
    ['empty fragment', 'https://app.example.com/cb#', { kind: 'none' }],
    ['a router path', 'https://app.example.com/#/settings', { kind: 'none' }],
    ['access token without refresh token', '#access_token=a', { kind: 'none' }],
  ])('%s', (_name, input, expected) => {
    expect(parseOAuthFragment(input)).toEqual(expected);
  });

  it('strips the fragment and keeps the query', () => {
    expect(stripFragment('https://a.example/cb?x=1#access_token=t')).toBe('https://a.example/cb?x=1');
    expect(stripFragment('https://a.example/cb')).toBe('https://a.example/cb');
  });
});

describe('OAuth in a browser', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startFakeServer();
  });
  afterAll(() => fake.close());
  afterEach(() => vi.unstubAllGlobals());

  /** Just enough of window/document/history for the SDK's browser paths. */
  function stubBrowser(href: string) {
    const location = { href, assign: vi.fn() };
    const history = { state: { keep: 1 }, replaceState: vi.fn() };
    vi.stubGlobal('window', { location });
    vi.stubGlobal('document', {});
    vi.stubGlobal('history', history);
    return { location, history };
  }

  it('signInWithOAuth navigates with the redirect URL', async () => {
    const { location } = stubBrowser('https://app.example.com/login#x');
    const client = clientOf(fake);
    const res = await client.auth.signInWithOAuth('apple', { redirectTo: 'https://app.example.com/cb' });
    const redirectOf = (url: string) => new URL(url).searchParams.get('redirect_url');
    expect(location.assign).toHaveBeenCalledWith(expect.stringMatching(new RegExp(`^${fake.url}/v1/auth/oauth/apple\\?redirect_url=`)));
    expect(redirectOf(location.assign.mock.calls[0][0])).toMatch(/^https:\/\/app\.example\.com\/cb\?plinth_flow=[0-9a-f]{32}$/);
    expect(res.data?.url).toBe(location.assign.mock.calls[0][0]);
    await client.auth.signInWithOAuth('google');
    // Without redirectTo: the current page, without its fragment.
    expect(redirectOf(location.assign.mock.calls[1][0])).toMatch(/^https:\/\/app\.example\.com\/login\?plinth_flow=[0-9a-f]{32}$/);
    client.auth.dispose();
  });

  it('handleOAuthCallback reads window.location and removes the fragment and the flow mark', async () => {
    const session = fake.issue(makeUser('b@example.com'));
    const { location, history } = stubBrowser('https://app.example.com/login');
    const client = clientOf(fake);
    const started = await client.auth.signInWithOAuth('github', { redirectTo: 'https://app.example.com/cb?next=%2Fhome' });
    const back = new URL(started.data?.url ?? '').searchParams.get('redirect_url');
    location.href = `${back}#access_token=${session.access_token}&refresh_token=${session.refresh_token}&token_type=bearer&expires_in=3600`;
    const res = await client.auth.handleOAuthCallback();
    expect(res.data?.access_token).toBe(session.access_token);
    expect(res.data?.user.email).toBe('b@example.com');
    expect(history.replaceState).toHaveBeenCalledWith({ keep: 1 }, '', 'https://app.example.com/cb?next=%2Fhome');
    client.auth.dispose();
  });

  it('removes an error fragment too', async () => {
    const { history } = stubBrowser('https://app.example.com/cb#error=provider_disabled&error_description=Disabled');
    const client = clientOf(fake);
    const res = await client.auth.handleOAuthCallback();
    expect(res.error).toEqual({ code: 'provider_disabled', message: 'Disabled', status: 0 });
    expect(history.replaceState).toHaveBeenCalledWith({ keep: 1 }, '', 'https://app.example.com/cb');
    client.auth.dispose();
  });
});
