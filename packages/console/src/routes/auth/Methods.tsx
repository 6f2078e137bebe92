import { Card, Field, Toggle } from '../../components/ui';
import type { Project } from '../../lib/api';
import type { Draft, Problems } from './problems';

/** The sign-in methods and the password and session rules. */
export function Methods({
  draft,
  set,
  problems,
  project,
}: {
  draft: Draft;
  set: <K extends keyof Draft>(key: K, value: Draft[K]) => void;
  problems: Problems;
  project: Project | undefined;
}) {
  const free = project?.plan === 'free';
  return (
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
              : project && !project.sms_configured
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
}
