/**
 * Any HTTP endpoint of the operator's (a gateway of their own, a provider Plinth has no adapter
 * for): a signed JSON POST per message. docs/sms.md shows how to verify the signature.
 */
import { createHmac } from 'node:crypto';
import type { SmsTransport } from '../types.js';
import { answer, type HttpOptions, post, refused } from './error.js';

export const SIGNATURE_HEADER = 'x-plinth-signature';
export const TIMESTAMP_HEADER = 'x-plinth-timestamp';

export interface WebhookOptions extends Omit<HttpOptions, 'baseUrl'> {
  /** The full endpoint, query string included (it may carry a token of the receiver's). */
  url: string;
  /** Signs each request when set. */
  secret?: string;
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
}

/**
 * `sha256=` + hex HMAC-SHA256 of `${timestamp}.${body}`. The timestamp is inside the signed
 * string so a receiver that rejects old timestamps also rejects replayed requests.
 * @example signWebhook('s3cret', 1700000000, '{"to":"+46701234567","body":"Code: 123456"}') // 'sha256=…'
 */
export function signWebhook(secret: string, timestamp: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

/**
 * POSTs `{"to": "+…", "body": "…"}` to `url`; any 2xx is success.
 * @example const sms = createWebhookTransport({ url: 'https://sms.example.com/send', secret }); await sms.send({ to: '+46701234567', body: 'Code: 123456' });
 */
export function createWebhookTransport(o: WebhookOptions): SmsTransport {
  const endpoint = new URL(o.url);
  // Query values are often the receiver's access token: keep them out of the delivery log.
  const secrets = [...(o.secret ? [o.secret] : []), ...endpoint.searchParams.values()];
  const now = o.now ?? Date.now;
  return {
    async send({ to, body }) {
      const raw = JSON.stringify({ to, body });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (o.secret) {
        const timestamp = Math.floor(now() / 1000);
        headers[TIMESTAMP_HEADER] = String(timestamp);
        headers[SIGNATURE_HEADER] = signWebhook(o.secret, timestamp, raw);
      }
      const x = await post('webhook', o.url, headers, raw, o, secrets);
      if (x.status >= 200 && x.status < 300) return { response: answer(x, secrets) };
      throw refused('webhook', x, secrets);
    },
  };
}
