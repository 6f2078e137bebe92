import { type FormEvent, useEffect, useState } from 'react';
import { Button, Card, CopyButton, Field, Notice } from '../../components/ui';
import { useRights } from '../../lib/roles';
import type { Caller } from '../../lib/search';
import type { Callers } from './callers';

export interface TestUser {
  id: string;
  email: string;
  /** Their current access token (this page's memory only), for the copy button: snippets name it $PLINTH_USER_TOKEN. */
  accessToken: string;
}

/** Who the test user is, following the memory-only client's sign-in state. */
export function useTestUser(callers: Callers | undefined): TestUser | null {
  const [user, setUser] = useState<TestUser | null>(null);
  useEffect(() => {
    if (!callers) return;
    const sub = callers.user.auth.onAuthStateChange((_event, session) => {
      setUser(
        session?.user
          ? { id: session.user.id, email: session.user.email ?? session.user.phone ?? session.user.id, accessToken: session.access_token }
          : null,
      );
    });
    return () => sub.data.subscription.unsubscribe();
  }, [callers]);
  return user;
}

const CALLER_TEXT: Record<Caller, [string, string]> = {
  anon: ['Anon (public key)', 'apikey: the public key. Row-level security applies, with no user: a new table shows nothing.'],
  user: [
    'Test user',
    'apikey: the public key, Authorization: the user’s access token. Row-level security decides, as for your app’s users.',
  ],
  secret: ['Secret key', 'apikey: the secret key. Row-level security is bypassed: everything is visible and writable.'],
};

/**
 * "Call as": anon, a test user signed up or signed in here (their session lives in this page's
 * memory only), or the secret key once revealed.
 */
export function CallerPanel(props: {
  callers: Callers | undefined;
  caller: Caller;
  onCaller: (c: Caller) => void;
  user: TestUser | null;
  revealed: boolean;
  onReveal: (r: boolean) => void;
  /** Undefined while the keys load; null for a role that may not have it (developer, viewer). */
  secretKey: string | null | undefined;
  inlineKeys: boolean;
  /** Without it (no snippets on the page: the realtime live view), no "write the keys" box. */
  onInlineKeys?: (v: boolean) => void;
}) {
  const { callers, caller, user, revealed } = props;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: 'error' | 'ok' | 'info'; text: string } | null>(null);

  async function auth(kind: 'signup' | 'signin', e?: FormEvent) {
    e?.preventDefault();
    if (!callers) return;
    setBusy(true);
    setMessage(null);
    try {
      if (kind === 'signup') {
        const res = await callers.user.auth.signUp({ email, password });
        if (res.error) setMessage({ kind: 'error', text: `${res.error.code}: ${res.error.message}` });
        else if (!res.data.session)
          setMessage({ kind: 'info', text: 'Signed up. The project asks for email confirmation: open the link (Messages), then sign in.' });
        else setMessage({ kind: 'ok', text: `Signed up and signed in as ${res.data.user.email}.` });
      } else {
        const res = await callers.user.auth.signIn({ email, password });
        if (res.error) setMessage({ kind: 'error', text: `${res.error.code}: ${res.error.message}` });
        else setMessage({ kind: 'ok', text: `Signed in as ${res.data.user.email}.` });
      }
      setPassword('');
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card title="Call as">
      <div role="radiogroup" aria-label="Call as" className="flex flex-wrap gap-4">
        {(Object.keys(CALLER_TEXT) as Caller[]).map((c) => (
          <label key={c} className="inline-flex items-center gap-1.5 text-sm">
            <input type="radio" name="caller" value={c} checked={caller === c} onChange={() => props.onCaller(c)} />
            {CALLER_TEXT[c][0]}
          </label>
        ))}
      </div>
      <p className="mt-2 text-xs text-fg-muted">{CALLER_TEXT[caller][1]}</p>
      {caller === 'user' && (
        <div className="mt-3 space-y-2">
          {user ? (
            <div className="flex flex-wrap items-center gap-2 text-sm">
              <span role="status">
                Signed in as <strong>{user.email}</strong> <code className="text-xs text-fg-muted">{user.id}</code>
              </span>
              <CopyButton value={user.accessToken} label="Copy the test user's access token" text="Copy access token" />
              <Button
                onClick={() => {
                  void callers?.user.auth.signOut();
                  setMessage(null);
                }}
              >
                Sign out the test user
              </Button>
            </div>
          ) : (
            <form onSubmit={(e) => void auth('signin', e)} className="flex flex-wrap items-end gap-2" aria-label="Test user">
              <Field label="Test user email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
              <Field
                label="Test user password"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="new-password"
              />
              <Button type="submit" variant="primary" disabled={busy || !email || !password}>
                Sign in
              </Button>
              <Button disabled={busy || !email || !password} onClick={() => void auth('signup')}>
                Sign up
              </Button>
            </form>
          )}
          {message && <Notice kind={message.kind}>{message.text}</Notice>}
          <p className="text-xs text-fg-muted">
            The test user’s session stays in this page’s memory: never in browser storage or the URL. cURL snippets read their token from
            $PLINTH_USER_TOKEN: copy it above, then <code>export PLINTH_USER_TOKEN='…'</code>.
          </p>
        </div>
      )}
      {caller === 'secret' && props.secretKey === null && (
        <p className="mt-3 text-sm text-fg-muted" data-testid="secret-key-unavailable">
          The secret key is not available for your role: call as anon or as a test user.
        </p>
      )}
      {caller === 'secret' && props.secretKey !== null && (
        <div className="mt-3 flex flex-wrap items-center gap-2 text-sm">
          <code className="break-all">{revealed && props.secretKey ? props.secretKey : `sk_${'•'.repeat(24)}`}</code>
          <Button onClick={() => props.onReveal(!revealed)} aria-pressed={revealed}>
            {revealed ? 'Hide' : 'Reveal secret key'}
          </Button>
          {!revealed && <span className="text-xs text-fg-muted">Reveal it to call with it.</span>}
        </div>
      )}
      {props.onInlineKeys && (
        <label className="mt-3 flex items-center gap-2 text-xs text-fg-muted">
          <input type="checkbox" checked={props.inlineKeys} disabled={!revealed} onChange={(e) => props.onInlineKeys?.(e.target.checked)} />
          Write the keys themselves into the snippets (after Reveal; otherwise $PLINTH_PUBLIC_KEY / $PLINTH_SECRET_KEY)
        </label>
      )}
    </Card>
  );
}

/**
 * Next to Send, for a request that may write (`method` other than GET and HEAD) and an admin
 * whose role reads only (a viewer): the explorer still sends it, but as the caller chosen above
 * (the public key or a test user; the secret key is not the viewer's), so the project's
 * policies decide, never the viewer's console session.
 * @example <WriteNote method="POST" />
 */
export function WriteNote({ method }: { method: string }) {
  const { role, change } = useRights();
  if (!role || change || method === 'GET' || method === 'HEAD') return null;
  return (
    <p className="text-xs text-fg-muted" data-testid="viewer-write-note">
      Your role reads only: this {method} goes out as the caller chosen above, not as you, so it changes only what that caller's policies
      allow (the secret key is not available to a {role}).
    </p>
  );
}
