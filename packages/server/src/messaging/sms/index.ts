/**
 * SMS providers for phone one-time codes. What this folder adds: one adapter per provider
 * (twilio.ts, elks46.ts, vonage.ts, webhook.ts) behind `SmsTransport.send`, and the choice
 * between them from `SMS_PROVIDER` at start. Variables and wire formats: docs/sms.md.
 */
import type { SmsTransport } from '../types.js';
import type { SmsConfig } from '../../config/index.js';
import { createElks46Transport } from './elks46.js';
import { createTwilioTransport } from './twilio.js';
import { createVonageTransport } from './vonage.js';
import { createWebhookTransport } from './webhook.js';

export { createElks46Transport, type ElksOptions } from './elks46.js';
export { createTwilioTransport, type TwilioOptions } from './twilio.js';
export { createVonageTransport, type VonageOptions } from './vonage.js';
export { signWebhook, createWebhookTransport, type WebhookOptions } from './webhook.js';

export { SMS_PROVIDERS } from '../../config/index.js';

/**
 * The SMS transport config.sms names: an adapter, `'dev'` (the caller keeps messages in its
 * dev inbox), or null when no provider is set (phone codes answer 503 sms_not_configured).
 * The config was checked whole when it was loaded (config/sms.ts).
 * @example const sms = createSmsTransport(loadConfig(process.env).sms);
 */
export function createSmsTransport(sms: SmsConfig): SmsTransport | 'dev' | null {
  switch (sms.provider) {
    case null:
      return null;
    case 'dev':
      return 'dev';
    case 'twilio':
      return createTwilioTransport(sms);
    case '46elks':
      return createElks46Transport(sms);
    case 'vonage':
      return createVonageTransport(sms);
    case 'webhook':
      return createWebhookTransport(sms);
  }
}
