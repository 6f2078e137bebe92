/**
 * 46elks (Stockholm; keeps numbers and messages in the EU): send an SMS.
 * https://46elks.com/docs/send-sms
 */
import type { SmsTransport } from '../types.js';
import { basicAuth, FORM, type HttpOptions, json, post, refused } from './error.js';

export const ELKS_API = 'https://api.46elks.com';
const SMS_PATH = '/a1/sms';

/**
 * 46elks' sender rules: a text sender ID of 3–11 letters and digits not starting with a digit
 * (operators drop or mangle most other characters), or an E.164 number when replies matter.
 */

export interface ElksOptions extends HttpOptions {
  username: string;
  password: string;
  /** Text sender ID (`Plinth`) or E.164 number; see ELKS_SENDER. */
  from: string;
}

/**
 * Sends through 46elks.
 * @example const sms = createElks46Transport({ username: 'u…', password, from: 'Plinth' }); await sms.send({ to: '+46701234567', body: 'Code: 123456' });
 */
export function createElks46Transport(o: ElksOptions): SmsTransport {
  const url = `${o.baseUrl ?? ELKS_API}${SMS_PATH}`;
  const authorization = basicAuth(o.username, o.password);
  const secrets = [o.password, o.username, authorization.slice('Basic '.length)];
  return {
    async send({ to, body }) {
      const form = new URLSearchParams({ from: o.from, to, message: body });
      const x = await post('46elks', url, { authorization, 'content-type': FORM }, form.toString(), o, secrets);
      if (x.status >= 200 && x.status < 300) {
        // 200 with the message as JSON; `status` is `created` until the delivery report.
        const data = json(x.text);
        if (typeof data?.id === 'string') return { response: `id=${data.id} status=${String(data.status)}` };
        throw refused('46elks', x, secrets, { detail: 'answer without a message id', retryable: false });
      }
      // Errors are plain text ("Invalid to number", "Not enough credits") with a 4xx status,
      // so the answer itself is the reason.
      throw refused('46elks', x, secrets);
    },
  };
}
