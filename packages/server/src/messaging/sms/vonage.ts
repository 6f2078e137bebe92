/**
 * Vonage (formerly Nexmo) SMS API, the classic one with key and secret in the body.
 * https://developer.vonage.com/en/api/sms
 */
import type { SmsTransport } from '../types.js';
import { FORM, type HttpOptions, json, post, refused } from './error.js';

export const VONAGE_API = 'https://rest.nexmo.com';
const SMS_PATH = '/sms/json';

// GSM 03.38 basic set plus its extension table. Text outside it must be sent with
// type=unicode, or Vonage replaces the characters it cannot encode with `?`.
const GSM7 = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà\f^{}\\[~\]|€]*$/u;

// Per-message statuses worth another try: 1 throttled, 5 internal error. The others (bad
// credentials, invalid number, barred, no credit…) fail the same way every time.
const RETRYABLE = new Set(['1', '5']);

export interface VonageOptions extends HttpOptions {
  apiKey: string;
  apiSecret: string;
  /** A Vonage number or an alphanumeric sender ID. */
  from: string;
}

/**
 * Sends through Vonage's SMS API.
 * @example const sms = createVonageTransport({ apiKey, apiSecret, from: 'Plinth' }); await sms.send({ to: '+46701234567', body: 'Code: 123456' });
 */
export function createVonageTransport(o: VonageOptions): SmsTransport {
  const url = `${o.baseUrl ?? VONAGE_API}${SMS_PATH}`;
  const secrets = [o.apiSecret, o.apiKey];
  return {
    async send({ to, body }) {
      // Vonage wants the number in international format without the leading `+`.
      const form = new URLSearchParams({ api_key: o.apiKey, api_secret: o.apiSecret, from: o.from, to: to.replace(/^\+/, ''), text: body });
      if (!GSM7.test(body)) form.set('type', 'unicode');
      const x = await post('vonage', url, { 'content-type': FORM }, form.toString(), o, secrets);
      if (x.status < 200 || x.status >= 300) throw refused('vonage', x, secrets);
      // Quirk: the answer is HTTP 200 even when nothing was sent. Each part of a long text has
      // its own entry, and only all-"0" statuses mean the message was accepted.
      const messages = json(x.text)?.messages;
      if (!Array.isArray(messages) || messages.length === 0) {
        throw refused('vonage', x, secrets, { detail: 'answer without messages', retryable: false });
      }
      const parts = messages as Array<Record<string, unknown>>;
      const failed = parts.find((m) => String(m.status) !== '0');
      if (failed) {
        const status = String(failed.status);
        const detail = `status ${status}: ${String(failed['error-text'] ?? 'no error-text')}`;
        throw refused('vonage', x, secrets, { detail, retryable: RETRYABLE.has(status) });
      }
      return { response: parts.map((m) => `message-id=${String(m['message-id'])} status=0`).join('; ') };
    },
  };
}
