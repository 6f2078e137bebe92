import { TEMPLATE_KINDS } from '@plinth/shared';
import { useMutation } from '@tanstack/react-query';
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
 * Per kind: subject, HTML and text overrides (empty = the default), with `{{link}}`,
 * `{{email}}`, `{{project}}` (and `{{code}}`, `{{new_email}}` where the kind has them); the preview is rendered by the server's own renderer.
 */
export function Templates({ draft, setDraft }: { draft: Draft; setDraft: (d: Draft) => void }) {
  const [kind, setKind] = useState<TemplateKind>('verification');
  const t = draft.email_templates[kind] ?? {};
  const setPart = (part: 'subject' | 'html' | 'text', value: string) => {
    const next = { ...t, [part]: value };
    if (!value) delete next[part];
    setDraft({ ...draft, email_templates: { ...draft.email_templates, [kind]: next } });
  };
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
        <p className="text-xs text-fg-muted">Leave a part empty to use the default. Variables: {'{{link}} {{email}} {{project}}'}.</p>
        <Field
          label="Subject"
          value={t.subject ?? ''}
          onChange={(e) => setPart('subject', e.target.value)}
          placeholder="(default subject)"
        />
        <TextArea label="HTML body" value={t.html ?? ''} onChange={(e) => setPart('html', e.target.value)} placeholder="(default HTML)" />
        <TextArea label="Text body" value={t.text ?? ''} onChange={(e) => setPart('text', e.target.value)} placeholder="(default text)" />
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
