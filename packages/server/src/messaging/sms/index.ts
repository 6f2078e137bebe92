/**
 * SMS providers for phone one-time codes. What this folder adds: one adapter per provider
 * (twilio.ts, elks46.ts, vonage.ts, webhook.ts) behind `SmsTransport.send`, and the choice
 * between them from `SMS_PROVIDER` at start. Variables and wire formats: docs/sms.md.
 */
import type { SmsTransport } from '../types.js';
import { ELKS_SENDER, elks46Transport } from './elks46.js';
import { twilioTransport } from './twilio.js';
import { vonageTransport } from './vonage.js';
import { webhookTransport } from './webhook.js';

export { elks46Transport, type ElksOptions } from './elks46.js';
export { twilioTransport, type TwilioOptions } from './twilio.js';
export { vonageTransport, type VonageOptions } from './vonage.js';
export { signWebhook, webhookTransport, type WebhookOptions } from './webhook.js';

export const SMS_PROVIDERS = ['twilio', '46elks', 'vonage', 'webhook', 'dev'] as const;

type Env = Record<string, string | undefined>;

/**
 * The SMS transport `SMS_PROVIDER` names: an adapter, `'dev'` (the caller keeps messages in
 * its dev inbox), or null when unset (phone codes answer 503 sms_not_configured). Throws
 * `config: …` naming the variable for an unknown provider, a missing credential or a base URL
 * that is not http(s); values are never echoed, since most of them are secrets.
 * @example const sms = createSmsTransport({ SMS_PROVIDER: '46elks', ELKS_API_USERNAME: 'u…', ELKS_API_PASSWORD: '…', ELKS_FROM: 'Plinth' });
 */
export function createSmsTransport(env: Env): SmsTransport | 'dev' | null {
  const provider = env.SMS_PROVIDER?.trim() ?? '';
  const need = (name: string) => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`config: SMS_PROVIDER=${provider} needs ${name}`);
    return value;
  };
  const optional = (name: string) => env[name]?.trim() || undefined;
  const base = (name: string) => {
    const value = optional(name);
    return value === undefined ? undefined : httpUrl(name, value, false).replace(/\/+$/, '');
  };

  switch (provider) {
    case '':
      return null;
    case 'dev':
      return 'dev';
    case 'twilio': {
      const accountSid = need('TWILIO_ACCOUNT_SID');
      const authToken = need('TWILIO_AUTH_TOKEN');
      const from = optional('TWILIO_FROM');
      const messagingServiceSid = optional('TWILIO_MESSAGING_SERVICE_SID');
      if (!from && !messagingServiceSid) {
        throw new Error('config: SMS_PROVIDER=twilio needs TWILIO_FROM (a number or sender ID) or TWILIO_MESSAGING_SERVICE_SID');
      }
      return twilioTransport({ accountSid, authToken, from, messagingServiceSid, baseUrl: base('TWILIO_BASE_URL') });
    }
    case '46elks': {
      const username = need('ELKS_API_USERNAME');
      const password = need('ELKS_API_PASSWORD');
      const from = need('ELKS_FROM');
      if (!ELKS_SENDER.test(from)) {
        throw new Error('config: ELKS_FROM must be a sender ID of 3–11 letters and digits starting with a letter, or an E.164 number');
      }
      return elks46Transport({ username, password, from, baseUrl: base('ELKS_BASE_URL') });
    }
    case 'vonage':
      return vonageTransport({
        apiKey: need('VONAGE_API_KEY'),
        apiSecret: need('VONAGE_API_SECRET'),
        from: need('VONAGE_FROM'),
        baseUrl: base('VONAGE_BASE_URL'),
      });
    case 'webhook':
      return webhookTransport({ url: httpUrl('SMS_WEBHOOK_URL', need('SMS_WEBHOOK_URL'), true), secret: optional('SMS_WEBHOOK_SECRET') });
    default:
      throw new Error(`config: SMS_PROVIDER must be one of ${SMS_PROVIDERS.join(', ')} (or unset)`);
  }
}

/**
 * An http(s) URL. `user:password@` is refused because fetch refuses it (and it would put a
 * credential where URLs get logged); base URLs take no query either, as a path is appended.
 */
function httpUrl(name: string, value: string, queryAllowed: boolean): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`config: ${name} is not a URL (expected http:// or https://…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`config: ${name} must be an http:// or https:// URL`);
  if (url.username || url.password) throw new Error(`config: ${name} must not contain user:password@`);
  if (!queryAllowed && (url.search || url.hash)) throw new Error(`config: ${name} must not have a query or fragment`);
  return value;
}
