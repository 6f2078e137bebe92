/**
 * Twilio Programmable Messaging: create a Message resource.
 * https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource
 */
import type { SmsTransport } from '../types.js';
import { basicAuth, FORM, type HttpOptions, json, post, refused } from './error.js';

export const TWILIO_API = 'https://api.twilio.com';
const messagesPath = (accountSid: string) => `/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;

export interface TwilioOptions extends HttpOptions {
  /** `AC…`; the Basic-auth user and part of the path. */
  accountSid: string;
  authToken: string;
  /** A Twilio number in E.164 or an alphanumeric sender ID. */
  from?: string;
  /** `MG…`: Twilio picks the sender from the service's pool. */
  messagingServiceSid?: string;
}

/**
 * Sends through Twilio. Needs `from` or `messagingServiceSid` (createSmsTransport checks).
 * @example const sms = createTwilioTransport({ accountSid: 'AC…', authToken, from: '+15005550006' }); await sms.send({ to: '+46701234567', body: 'Code: 123456' });
 */
export function createTwilioTransport(o: TwilioOptions): SmsTransport {
  const url = `${o.baseUrl ?? TWILIO_API}${messagesPath(o.accountSid)}`;
  const authorization = basicAuth(o.accountSid, o.authToken);
  const secrets = [o.authToken, o.accountSid, authorization.slice('Basic '.length)];
  return {
    async send({ to, body }) {
      const form = new URLSearchParams({ To: to, Body: body });
      // Both may be set: Twilio then sends from `From` if that number is in the service's pool,
      // which is how an operator pins one sender while keeping the service's other features.
      if (o.from) form.set('From', o.from);
      if (o.messagingServiceSid) form.set('MessagingServiceSid', o.messagingServiceSid);
      const x = await post('twilio', url, { authorization, 'content-type': FORM }, form.toString(), o, secrets);
      const data = json(x.text);
      if (x.status >= 200 && x.status < 300) {
        // 201 with the new Message: `queued` from a number, `accepted` through a Messaging Service.
        if (typeof data?.sid === 'string') return { response: `sid=${data.sid} status=${String(data.status)}` };
        throw refused('twilio', x, secrets, { detail: 'answer without a message sid', retryable: false });
      }
      // Errors are JSON {code, message, more_info, status}; the code is what Twilio's error pages index.
      const detail = data && typeof data.message === 'string' ? `${String(data.code)} ${data.message}` : undefined;
      throw refused('twilio', x, secrets, { detail });
    },
  };
}
