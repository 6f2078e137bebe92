import { type ReactNode, useState } from 'react';
import { CopyButton, Field } from '../../components/ui';
import { MASK } from '../../lib/api';

/**
 * A write-only secret: empty means "keep what is stored"; a typed value replaces it. `hint`
 * replaces the default one (an OpenID Connect provider's stored secret is not always kept).
 */
export function Secret(props: { label: string; value: string | null; onChange: (v: string) => void; error?: string; hint?: ReactNode }) {
  const stored = props.value === MASK;
  return (
    <Field
      label={props.label}
      type="password"
      autoComplete="off"
      placeholder={stored ? 'Stored — type to replace' : 'Not set'}
      value={stored ? '' : (props.value ?? '')}
      onChange={(e) => props.onChange(e.target.value === '' && stored ? MASK : e.target.value)}
      error={props.error}
      hint={props.hint ?? (stored ? 'A secret is stored; it is never shown again.' : undefined)}
    />
  );
}

/** The redirect URI to register at a provider (`{PUBLIC_URL}/v1/auth/oauth/{id}/callback`), with a copy button. */
export function Callback({ publicUrl, provider }: { publicUrl: string; provider: string }) {
  const url = `${publicUrl}/v1/auth/oauth/${provider}/callback`;
  return (
    <div className="flex flex-wrap items-center gap-2 text-sm">
      <span className="text-fg-muted">Callback URL to register:</span>
      <code className="break-all" data-testid={`callback-${provider}`}>
        {url}
      </code>
      <CopyButton value={url} label={`Copy the ${provider} callback URL`} />
      <span className="w-full text-xs text-fg-muted">It starts with the site URL (the server’s PUBLIC_URL, set in its environment).</span>
    </div>
  );
}

/**
 * A list edited as text (one entry a line, scopes between spaces): the draft keeps the parsed
 * list, the field keeps the text as typed. Parsing drops empty entries, so a field showing the
 * joined list would swallow the Enter or space that starts the next entry. An outside change of
 * the list (Discard changes, a save) shows the list again.
 * @example const [text, setText] = useListText(draft.cors_origins, lines, '\n', (v) => set('cors_origins', v));
 */
export function useListText(value: readonly string[], parse: (text: string) => string[], sep: string, onChange: (v: string[]) => void) {
  const [text, setText] = useState(value.join(sep));
  const shown = parse(text).join('\u0000') === value.join('\u0000') ? text : value.join(sep);
  return [
    shown,
    (next: string) => {
      setText(next);
      onChange(parse(next));
    },
  ] as const;
}
