import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES, renderEmail, renderSms } from './templates.js';

describe('email templates', () => {
  it('every default kind renders its link in the text and the HTML', () => {
    for (const kind of ['verification', 'reset', 'magic_link', 'email_change'] as const) {
      const mail = renderEmail(kind, { link: 'https://app.example.com/p?token=abc&x=1', email: 'ada@example.com', project: 'Acme' });
      expect(mail.text, kind).toContain('https://app.example.com/p?token=abc&x=1');
      expect(mail.html, kind).toContain('href="https://app.example.com/p?token=abc&amp;x=1"');
      expect(mail.subject, kind).toContain('Acme');
    }
  });

  it('an override replaces only the parts it sets; the test email cannot be overridden', () => {
    const mail = renderEmail('reset', { link: 'L', project: 'P' }, { reset: { subject: 'New password for {{ project }}' } });
    expect(mail.subject).toBe('New password for P');
    expect(mail.text).toBe(renderEmail('reset', { link: 'L', project: 'P' }).text);
    expect(renderEmail('test', { project: 'P' }, { test: { subject: 'x' } }).subject).toBe('Test email from P');
  });

  it('values never inject markup, headers or further variables', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (project, email) => {
        const mail = renderEmail('verification', { link: 'https://a.example/v?token=t', email, project });
        expect(mail.subject).not.toMatch(/[\r\n]/);
        const stripped = mail.html.replace(/<\/?(!doctype html|html|body|p|a)\b[^>]*>/gi, '');
        expect(stripped).not.toMatch(/[<>]/);
        // A value that looks like a variable stays literal text.
        const looksLike = renderEmail('verification', { link: 'L', email: '{{link}}', project });
        expect(looksLike.text).toContain('{{link}}');
      }),
    );
  });

  it('an unknown variable renders as nothing', () => {
    expect(renderEmail('reset', { link: 'L' }, { reset: { text: 'a{{nope}}b {{link}}' } }).text).toBe('ab L');
  });

  it('the SMS text carries the code and the project', () => {
    expect(renderSms({ code: '012345', project: 'Acme' })).toBe('012345 is your Acme code. It expires in 10 minutes.');
    expect(Object.keys(DEFAULT_TEMPLATES).sort()).toEqual([
      'email_change',
      'email_change_notice',
      'magic_link',
      'reauthentication',
      'reset',
      'test',
      'verification',
    ]);
  });
});
