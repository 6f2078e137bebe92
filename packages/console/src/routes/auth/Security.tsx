import { Card, Field, Select, TextArea, Toggle } from '../../components/ui';
import { useListText } from './fields';
import { type Draft, lines, listErrors, type Problems } from './problems';

/**
 * Second factors and passkeys (docs/securing-accounts.md): TOTP enrolment, who enforces aal2,
 * passkeys and their relying party and origins.
 */
export function Security({
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
  const [origins, setOrigins] = useListText(draft.passkey_origins, lines, '\n', (v) => set('passkey_origins', v));
  let host = '';
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    host = '';
  }
  return (
    <div className="space-y-4">
      <Card title="Multi-factor authentication">
        <div className="grid gap-3 sm:grid-cols-2">
          <Toggle
            label="Authenticator apps (TOTP)"
            checked={draft.mfa_totp_enabled}
            onChange={(v) => set('mfa_totp_enabled', v)}
            reason="Users may enrol a second factor. Off: no new enrolments; verified factors keep working."
            error={problems.mfa_totp_enabled}
          />
          <Select
            label="Enforcement"
            value={draft.mfa_enforcement}
            onChange={(e) => set('mfa_enforcement', e.target.value as Draft['mfa_enforcement'])}
            options={[
              ['server', 'Server: refuse aal1 tokens of users with a factor'],
              ['policies', "Policies: let them through; policies read auth.jwt()->>'aal'"],
            ]}
            error={problems.mfa_enforcement}
            hint="With Server, a password alone reads nothing once a user has a verified factor (403 mfa_required)."
          />
        </div>
      </Card>
      <Card title="Passkeys">
        <div className="grid gap-3 sm:grid-cols-2">
          <Toggle
            label="Passkeys"
            checked={draft.passkey_enabled}
            onChange={(v) => set('passkey_enabled', v)}
            reason="Sign-in without a password (username-less), sign-up with a passkey alone, and passkeys added by signed-in users. A passkey with a fingerprint or PIN is aal2 by itself."
            error={problems.passkey_enabled}
          />
          <Field
            label="Relying party ID"
            type="text"
            placeholder={host || 'example.com'}
            value={draft.passkey_rp_id ?? ''}
            onChange={(e) => set('passkey_rp_id', e.target.value.trim() || null)}
            error={problems.passkey_rp_id}
            hint={
              /^[\d.]+$|^\[/.test(host) && !draft.passkey_rp_id
                ? `Browsers refuse an IP address (${host}) as relying party: passkeys need the site on a domain name (localhost works for development).`
                : `Empty: ${host || 'the host of the site URL'}. A parent domain (example.com) serves its subdomains; passkeys made under one ID do not work under another.`
            }
          />
          <TextArea
            label="Other origins allowed to use passkeys (one per line)"
            value={origins}
            onChange={(e) => setOrigins(e.target.value)}
            errors={listErrors(problems, 'passkey_origins')}
            hint={`Besides ${publicUrl || 'the site URL'}: the app pages that call signInWithPasskey, e.g. https://app.example.com.`}
          />
        </div>
      </Card>
    </div>
  );
}
