import { TEMPLATE_KINDS } from '@plinth/shared';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, ErrorNotice, Field, Notice, TextArea } from '../../components/ui';
import { ApiFailure, api, type Project, type TemplateKind } from '../../lib/api';
import { MailFrame } from '../../components/MailFrame';
import type { Draft } from './problems';

/** The label of each template kind (the kinds are packages/shared's one list: a missing label is a type error). */
const LABELS: Record<TemplateKind, string> = {
  verification: 'Email verification',
  reset: 'Password reset',
  magic_link: 'Magic link',
  email_change: 'Email change (new address)',
  email_change_notice: 'Email change (notice to the old address)',
  reauthentication: 'Reauthentication code',
};
const KINDS = TEMPLATE_KINDS.map((k) => [k, LABELS[k]] as const);

/**
 * Per kind: subject, HTML and text, starting from the built-in text (an edit makes an override;
 * "Reset to the default" drops it), with `{{link}}`,
 * `{{email}}`, `{{project}}` (and `{{code}}`, `{{new_email}}` where the kind has them); the preview is rendered by the server's own renderer.
 */
export function Templates({ draft, setDraft }: { draft: Draft; setDraft: (d: Draft) => void }) {
  const [kind, setKind] = useState<TemplateKind>('verification');
  const defaults = useQuery({ queryKey: ['email-template-defaults'], queryFn: api.templateDefaults, staleTime: Number.POSITIVE_INFINITY });
  const t = draft.email_templates[kind] ?? {};
  const base = defaults.data?.[kind];
  // A part equal to the default is no override: a later change of the built-in text still reaches it.
  const setPart = (part: 'subject' | 'html' | 'text', value: string) => {
    const next = { ...t, [part]: value };
    if (!value || value === base?.[part]) delete next[part];
    setDraft({ ...draft, email_templates: { ...draft.email_templates, [kind]: next } });
  };
  const reset = () => {
    const { [kind]: _dropped, ...rest } = draft.email_templates;
    setDraft({ ...draft, email_templates: rest });
    preview.reset();
  };
  const changed = Object.keys(t).length > 0;
  const shown = (part: 'subject' | 'html' | 'text') => t[part] ?? base?.[part] ?? '';
  const preview = useMutation({ mutationFn: () => api.previewEmail(kind, t) });
  return (
    <Card title="Email templates">
      <div className="space-y-3">
        <div className="flex flex-col gap-1 text-sm font-medium">
          <label htmlFor="template-kind">Template</label>
          <select
            id="template-kind"
            value={kind}
            onChange={(e) => {
              setKind(e.target.value as TemplateKind);
              preview.reset();
            }}
            className="w-64 rounded-md border border-line bg-surface px-2 py-1.5 text-sm"
          >
            {KINDS.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className="flex flex-wrap items-center gap-2 text-xs text-fg-muted">
          <span role="status" data-testid="template-state">
            {changed ? 'Changed from the default (saved with Save settings).' : 'The default text: edit it to make it yours.'}
          </span>
          <span>
            Variables: {'{{link}} {{email}} {{project}}'}
            {kind === 'email_change' ? ' {{new_email}}' : ''}
            {kind === 'reauthentication' ? ' {{code}}' : ''}.
          </span>
          {changed && (
            <Button className="ml-auto" onClick={reset}>
              Reset to the default
            </Button>
          )}
        </div>
        {defaults.error && <ErrorNotice error={defaults.error} retry={() => void defaults.refetch()} />}
        <Field label="Subject" value={shown('subject')} onChange={(e) => setPart('subject', e.target.value)} />
        <TextArea label="HTML body" rows={6} value={shown('html')} onChange={(e) => setPart('html', e.target.value)} />
        <TextArea label="Text body" rows={6} value={shown('text')} onChange={(e) => setPart('text', e.target.value)} />
        <Button onClick={() => preview.mutate()} disabled={preview.isPending}>
          {preview.isPending ? 'Rendering…' : 'Preview'}
        </Button>
        {preview.error && <ErrorNotice error={preview.error} />}
        {preview.data && (
          <section aria-label="Preview" className="space-y-2">
            <p className="text-sm">
              <span className="text-fg-muted">Subject:</span> {preview.data.subject}
            </p>
            <MailFrame html={preview.data.html} title="HTML preview" />
            <pre className="whitespace-pre-wrap rounded-md border border-line bg-muted p-2 text-xs">{preview.data.text}</pre>
          </section>
        )}
      </div>
    </Card>
  );
}

/** "Send test email": the SMTP server's own answer (or the dev inbox), not a timeout. */
export function Delivery({ project }: { project: Project | undefined }) {
  const [to, setTo] = useState('');
  const send = useMutation({ mutationFn: () => api.testEmail(to) });
  const smtpAnswer = send.error instanceof ApiFailure ? (send.error.details as { response?: string } | undefined)?.response : undefined;
  return (
    <Card title="Email delivery">
      <p className="mb-3 text-sm text-fg-muted">
        {project?.email_delivery === 'smtp'
          ? 'Mail goes through the SMTP server of SMTP_URL.'
          : 'No SMTP_URL is set: mail goes to the dev inbox (Messages page).'}
      </p>
      <div className="flex flex-wrap items-end gap-2">
        <Field label="Send a test email to" type="email" value={to} onChange={(e) => setTo(e.target.value)} className="w-80" />
        <Button onClick={() => send.mutate()} disabled={!to || send.isPending}>
          {send.isPending ? 'Sending…' : 'Send test email'}
        </Button>
      </div>
      <div className="mt-3">
        {send.data && (
          <Notice kind="ok" title={`Sent to ${send.data.to}`}>
            {send.data.transport === 'smtp' ? 'The SMTP server answered: ' : ''}
            <code>{send.data.response}</code>
          </Notice>
        )}
        {send.error &&
          (smtpAnswer ? (
            <Notice kind="error" title="The SMTP server refused the test email">
              <code>{smtpAnswer}</code>
            </Notice>
          ) : (
            <ErrorNotice error={send.error} />
          ))}
      </div>
    </Card>
  );
}
