/**
 * What Plinth sends: the one list of email and SMS kinds every other list derives from (the
 * outbox, the templates, the template settings, the delivery log).
 */

/** Emails an auth flow sends, each with a template a project may override (`email_templates`). */
export const TEMPLATE_KINDS = ['verification', 'reset', 'magic_link', 'email_change', 'email_change_notice', 'reauthentication'] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** Every email kind: the templated ones and the test email (its text is fixed). */
export const EMAIL_KINDS = [...TEMPLATE_KINDS, 'test'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

/** SMS kinds: the one-time code of phone sign-in (also sent for reauthentication). */
export const SMS_KINDS = ['sms_otp'] as const;
export type SmsKind = (typeof SMS_KINDS)[number];

export type MessageKind = EmailKind | SmsKind;

/** @example isTemplateKind('reset') // true */
export function isTemplateKind(kind: string): kind is TemplateKind {
  return (TEMPLATE_KINDS as readonly string[]).includes(kind);
}
