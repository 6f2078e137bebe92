import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, Dialog, ErrorNotice, Field, Notice, when } from '../../components/ui';
import { api } from '../../lib/api';

/** What the admin types to confirm a revoking rotation. */
export const REVOKE_WORD = 'revoke';

/**
 * Rotating the key that signs end-users' access tokens (`POST /api/v1/admin/signing-keys/rotate`,
 * docs/api.md §4.1; `plinth keys rotate-signing` does the same): a new key signs from now on,
 * the old one still verifies the tokens it signed until they expire. With revoke, the old key
 * goes at once and every session ends: behind a typed confirmation.
 */
export function SigningKey() {
  const [open, setOpen] = useState(false);
  const [revoke, setRevoke] = useState(false);
  const [typed, setTyped] = useState('');
  const rotate = useMutation({
    mutationFn: () => api.rotateSigningKey(revoke),
    onSuccess: () => setOpen(false),
  });
  const r = rotate.data;
  const start = () => {
    setRevoke(false);
    setTyped('');
    rotate.reset();
    setOpen(true);
  };
  return (
    <Card title="Token signing key" actions={<Button onClick={start}>Rotate signing key</Button>}>
      <p className="text-sm text-fg-muted">
        End-users' access tokens are signed with an ES256 key the app verifies through the JWKS (<code>/v1/auth/.well-known/jwks.json</code>
        ). Rotate it if it may have leaked, or on a schedule.
      </p>
      {r && (
        <div className="mt-2">
          <Notice kind="ok" title="The signing key was rotated">
            <p>
              New key <code data-testid="new-kid">{r.kid}</code> signs from now on.{' '}
              {r.revoked
                ? `The previous key is gone: ${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended, every user signs in again.`
                : r.previous.length
                  ? `The previous key (${r.previous.join(', ')}) still verifies the tokens it signed until ${when(r.retire_at)}, then leaves the JWKS.`
                  : ''}
            </p>
          </Notice>
        </div>
      )}
      <Dialog title="Rotate the signing key?" open={open} onOpenChange={setOpen}>
        <div className="space-y-3 text-sm">
          <p>
            A new key signs every token from now on. Signed-in users stay signed in: the old key keeps verifying the tokens it signed until
            the longest token lifetime has passed, then leaves the JWKS.
          </p>
          <label className="flex items-start gap-2">
            <input type="checkbox" className="mt-1" checked={revoke} onChange={(e) => setRevoke(e.target.checked)} />
            <span>
              Also revoke the old key at once (it leaked): every access token it signed stops working and{' '}
              <strong>every user session ends</strong>; everyone signs in again.
            </span>
          </label>
          {revoke && (
            <Field label={`Type ${REVOKE_WORD} to confirm`} autoComplete="off" value={typed} onChange={(e) => setTyped(e.target.value)} />
          )}
          {rotate.error && <ErrorNotice error={rotate.error} />}
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button
              variant={revoke ? 'danger' : 'primary'}
              disabled={rotate.isPending || (revoke && typed.trim() !== REVOKE_WORD)}
              onClick={() => rotate.mutate()}
            >
              {rotate.isPending ? 'Rotating…' : revoke ? 'Rotate and revoke the old key' : 'Rotate'}
            </Button>
          </div>
        </div>
      </Dialog>
    </Card>
  );
}
