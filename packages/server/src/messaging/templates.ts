/**
 * Email and SMS texts. Each email kind has a default subject, HTML and text; a project can
 * override any part in its auth settings (`email_templates`). Variables are written
 * `{{name}}`: `link`, `email`, `project`, and `code` (an SMS's code; the 6-digit code mailed
 * beside a link, which works in its place). Values are HTML-escaped in the
 * HTML part; an unknown variable renders as nothing.
 */

import type { EmailKind } from '@plinth/shared';

export type { EmailKind };

export interface EmailTemplate {
  subject: string;
  html: string;
  text: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

const wrap = (body: string) =>
  `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:36rem;margin:2rem auto;padding:0 1rem">${body}</body></html>`;
const button = (label: string) =>
  `<p><a href="{{link}}" style="display:inline-block;background:#1f6feb;color:#fff;padding:.6rem 1rem;border-radius:6px;text-decoration:none">${label}</a></p><p style="font-size:.85rem;color:#555">Or open this link: <a href="{{link}}">{{link}}</a></p>`;

export const DEFAULT_TEMPLATES: Record<EmailKind, EmailTemplate> = {
  verification: {
    subject: 'Confirm your email for {{project}}',
    html: wrap(
      `<p>Someone signed up to {{project}} with {{email}}. If it was you, confirm the address:</p>${button('Confirm email')}<p style="font-size:1.1rem;letter-spacing:.1rem">Or enter this code: {{code}}</p><p style="font-size:.85rem;color:#555">The link works once and expires in 24 hours. It confirms the password chosen at that sign-up. If you did not sign up just now, ignore this email: it is safe to, and nothing happens without this link.</p>`,
    ),
    text: 'Someone signed up to {{project}} with {{email}}. If it was you, confirm the address:\n\n{{link}}\n\nOr enter this code: {{code}}\n\nThe link works once and expires in 24 hours. It confirms the password chosen at that sign-up. If you did not sign up just now, ignore this email: it is safe to, and nothing happens without this link.\n',
  },
  reset: {
    subject: 'Reset your {{project}} password',
    html: wrap(
      `<p>Someone asked to reset the password of {{email}} on {{project}}.</p>${button('Choose a new password')}<p style="font-size:1.1rem;letter-spacing:.1rem">Or enter this code: {{code}}</p><p style="font-size:.85rem;color:#555">The link works once and expires in 1 hour. If it was not you, ignore this email: your password stays as it is.</p>`,
    ),
    text: 'Someone asked to reset the password of {{email}} on {{project}}. Choose a new password here:\n\n{{link}}\n\nOr enter this code: {{code}}\n\nThe link works once and expires in 1 hour. If it was not you, ignore this email.\n',
  },
  magic_link: {
    subject: 'Your {{project}} sign-in link',
    html: wrap(
      `<p>Sign in to {{project}} as {{email}}.</p>${button('Sign in')}<p style="font-size:1.1rem;letter-spacing:.1rem">Or enter this code: {{code}}</p><p style="font-size:.85rem;color:#555">The link works once and expires in 15 minutes. If you did not ask for it, ignore this email.</p>`,
    ),
    text: 'Sign in to {{project}} as {{email}}:\n\n{{link}}\n\nOr enter this code: {{code}}\n\nThe link works once and expires in 15 minutes. If you did not ask for it, ignore this email.\n',
  },
  email_change: {
    subject: 'Confirm your new email for {{project}}',
    html: wrap(
      `<p>Confirm {{email}} as the new email address of your {{project}} account.</p>${button('Confirm new email')}<p style="font-size:1.1rem;letter-spacing:.1rem">Or enter this code: {{code}}</p><p style="font-size:.85rem;color:#555">The link works once and expires in 24 hours. If you did not ask for this change, ignore this email.</p>`,
    ),
    text: 'Confirm {{email}} as the new email address of your {{project}} account:\n\n{{link}}\n\nOr enter this code: {{code}}\n\nThe link works once and expires in 24 hours. If you did not ask for this change, ignore this email.\n',
  },
  email_change_notice: {
    subject: 'Your {{project}} email is being changed',
    html: wrap(
      `<p>Someone asked to change the email address of your {{project}} account from {{email}} to {{new_email}}. The change happens when the link sent to the new address is used.</p><p style="font-size:.85rem;color:#555">If it was not you, sign in and change your password, or reset it: that ends every other session.</p>`,
    ),
    text: 'Someone asked to change the email address of your {{project}} account from {{email}} to {{new_email}}. The change happens when the link sent to the new address is used.\n\nIf it was not you, sign in and change your password, or reset it: that ends every other session.\n',
  },
  reauthentication: {
    subject: 'Your {{project}} confirmation code',
    html: wrap(
      `<p>Your code to confirm a change to your {{project}} account ({{email}}):</p><p style="font-size:1.6rem;letter-spacing:.2rem"><strong>{{code}}</strong></p><p style="font-size:.85rem;color:#555">It expires in 10 minutes. If you did not ask for it, someone may be using your account: change your password.</p>`,
    ),
    text: 'Your code to confirm a change to your {{project}} account ({{email}}): {{code}}\n\nIt expires in 10 minutes. If you did not ask for it, someone may be using your account: change your password.\n',
  },
  test: {
    subject: 'Test email from {{project}}',
    html: wrap('<p>This is a test email from {{project}}. Email delivery works.</p>'),
    text: 'This is a test email from {{project}}. Email delivery works.\n',
  },
};

const SMS_OTP = '{{code}} is your {{project}} code. It expires in 10 minutes.';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** `{{ name }}` → value; the value is not scanned again, so data can never inject variables. */
function fill(template: string, vars: Record<string, string>, html: boolean): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_m, name: string) => {
    const v = Object.hasOwn(vars, name) ? vars[name] : '';
    return html ? escapeHtml(v) : v;
  });
}

/**
 * Renders an email of `kind` with the project's overrides over the defaults. Header values
 * (the subject) lose line breaks, so no value can add a header.
 * @example renderEmail('reset', { link: 'https://app.example.com/reset?token=…', email: 'a@b.c', project: 'Acme' }, {})
 */
export function renderEmail(
  kind: EmailKind,
  vars: Record<string, string>,
  overrides: Partial<Record<string, Partial<EmailTemplate>>> = {},
): RenderedEmail {
  const tpl = { ...DEFAULT_TEMPLATES[kind], ...(kind === 'test' ? {} : overrides[kind]) };
  return {
    subject: fill(tpl.subject, vars, false)
      .replace(/[\r\n]+/g, ' ')
      .trim(),
    html: fill(tpl.html, vars, true),
    text: fill(tpl.text, vars, false),
  };
}

/** @example renderSms({ code: '123456', project: 'Acme' }) // '123456 is your Acme code. It expires in 10 minutes.' */
export function renderSms(vars: Record<string, string>): string {
  return fill(SMS_OTP, vars, false);
}

export function isEmailKind(kind: string): kind is EmailKind {
  return Object.hasOwn(DEFAULT_TEMPLATES, kind);
}
