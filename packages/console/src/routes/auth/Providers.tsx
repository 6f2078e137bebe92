import { CLIENT_SECRET_PROVIDERS, type ClientSecretProviderId } from '@plinth/shared';
import { Card, Field, Toggle } from '../../components/ui';
import { MASK } from '../../lib/api';
import { Callback, Secret } from './fields';
import type { Draft, Problems } from './problems';

/** Label and where to create the app, per provider (the ids are packages/shared's one list). */
const ABOUT: Record<ClientSecretProviderId, [label: string, where: string]> = {
  google: ['Google', 'Google Cloud console → APIs & Services → Credentials → OAuth client (Web application).'],
  github: ['GitHub', 'GitHub → Settings → Developer settings → OAuth Apps (or a GitHub App with the user:email scope).'],
  linkedin: ['LinkedIn', 'LinkedIn developers → your app → Products: "Sign In with LinkedIn using OpenID Connect".'],
  microsoft: ['Microsoft', 'Entra ID → App registrations; add the xms_edov optional claim so emails count as verified.'],
};
const OAUTH = CLIENT_SECRET_PROVIDERS.map((id) => [id, ...ABOUT[id]] as const);

/** One form per social provider: enabled, credentials, the callback URL to copy; Apple's .p8 as a file. */
export function Providers({
  draft,
  setDraft,
  problems,
  publicUrl,
}: {
  draft: Draft;
  setDraft: (d: Draft) => void;
  problems: Problems;
  publicUrl: string;
}) {
  const setProvider = (name: keyof Draft['providers'], patch: Record<string, unknown>) =>
    setDraft({ ...draft, providers: { ...draft.providers, [name]: { ...draft.providers[name], ...patch } } });
  const err = (name: string, field: string) =>
    problems[`providers.${name}.${field}`] ?? (field === 'enabled' ? problems[`providers.${name}`] : undefined);
  const apple = draft.providers.apple;

  return (
    <div className="grid gap-4 lg:grid-cols-2">
      {OAUTH.map(([name, label, where]) => {
        const p = draft.providers[name];
        return (
          <Card key={name} title={label}>
            <div className="space-y-3">
              <Toggle
                label={`Enable ${label}`}
                checked={p.enabled}
                onChange={(v) => setProvider(name, { enabled: v })}
                error={err(name, 'enabled')}
              />
              <p className="text-xs text-fg-muted">{where}</p>
              <Callback publicUrl={publicUrl} provider={name} />
              <Field
                label={`${label} client ID`}
                value={p.client_id ?? ''}
                onChange={(e) => setProvider(name, { client_id: e.target.value || null })}
                error={err(name, 'client_id')}
              />
              <Secret
                label={`${label} client secret`}
                value={p.client_secret}
                onChange={(v) => setProvider(name, { client_secret: v || null })}
                error={err(name, 'client_secret')}
              />
            </div>
          </Card>
        );
      })}
      <Card title="Apple">
        <div className="space-y-3">
          <Toggle
            label="Enable Apple"
            checked={apple.enabled}
            onChange={(v) => setProvider('apple', { enabled: v })}
            error={err('apple', 'enabled')}
          />
          <p className="text-xs text-fg-muted">
            Apple developer → Identifiers (a Services ID) and Keys (Sign in with Apple, download the .p8 once).
          </p>
          <Callback publicUrl={publicUrl} provider="apple" />
          <Field
            label="Apple services ID"
            value={apple.service_id ?? ''}
            onChange={(e) => setProvider('apple', { service_id: e.target.value || null })}
            error={err('apple', 'service_id')}
          />
          <Field
            label="Apple team ID"
            value={apple.team_id ?? ''}
            onChange={(e) => setProvider('apple', { team_id: e.target.value || null })}
            error={err('apple', 'team_id')}
          />
          <Field
            label="Apple key ID"
            value={apple.key_id ?? ''}
            onChange={(e) => setProvider('apple', { key_id: e.target.value || null })}
            error={err('apple', 'key_id')}
          />
          <Field
            label="Apple private key (.p8 file)"
            type="file"
            accept=".p8,application/pkcs8,text/plain"
            onChange={async (e) => {
              const file = e.target.files?.[0];
              if (file) setProvider('apple', { private_key: (await file.text()).trim() });
            }}
            error={err('apple', 'private_key')}
            hint={
              apple.private_key === MASK
                ? 'A key is stored; choose a file to replace it.'
                : apple.private_key
                  ? 'Key read from the file; save to store it.'
                  : 'No key stored.'
            }
          />
        </div>
      </Card>
    </div>
  );
}
