import { ConfigError, type Env, httpUrl, optional } from './parse.js';

/** The values `SMS_PROVIDER` may take (unset: phone codes answer 503 sms_not_configured). */
export const SMS_PROVIDERS = ['twilio', '46elks', 'vonage', 'webhook', 'dev'] as const;

/** 46elks takes a text sender ID of 3–11 letters and digits starting with a letter, or an E.164 number. */
export const ELKS_SENDER = /^(?:[A-Za-z][A-Za-z0-9]{2,10}|\+[1-9]\d{1,14})$/;

/** The SMS provider and its credentials (docs/sms.md), checked whole at start. */
export type SmsConfig =
  | { provider: null }
  | { provider: 'dev' }
  | { provider: 'twilio'; accountSid: string; authToken: string; from?: string; messagingServiceSid?: string; baseUrl?: string }
  | { provider: '46elks'; username: string; password: string; from: string; baseUrl?: string }
  | { provider: 'vonage'; apiKey: string; apiSecret: string; from: string; baseUrl?: string }
  | { provider: 'webhook'; url: string; secret?: string };

/**
 * `SMS_PROVIDER` and its variables. A wrong value is one `config: …` line naming the variable
 * (an unknown provider, a missing credential, a base URL that is not http(s)); values are
 * never echoed, since most of them are secrets.
 * @example parseSms({ SMS_PROVIDER: '46elks', ELKS_API_USERNAME: 'u…', ELKS_API_PASSWORD: '…', ELKS_FROM: 'Plinth' })
 */
export function parseSms(env: Env): SmsConfig {
  const provider = env.SMS_PROVIDER?.trim() ?? '';
  const need = (name: string) => {
    const value = optional(env, name);
    if (!value) throw new ConfigError(`SMS_PROVIDER=${provider} needs ${name}`);
    return value;
  };
  const opt = (name: string) => optional(env, name);
  const base = (name: string) => httpUrl(env, name, { base: true });
  switch (provider) {
    case '':
      return { provider: null };
    case 'dev':
      return { provider: 'dev' };
    case 'twilio': {
      const accountSid = need('TWILIO_ACCOUNT_SID');
      const authToken = need('TWILIO_AUTH_TOKEN');
      const from = opt('TWILIO_FROM');
      const messagingServiceSid = opt('TWILIO_MESSAGING_SERVICE_SID');
      if (!from && !messagingServiceSid) {
        throw new ConfigError('SMS_PROVIDER=twilio needs TWILIO_FROM (a number or sender ID) or TWILIO_MESSAGING_SERVICE_SID');
      }
      return { provider, accountSid, authToken, from, messagingServiceSid, baseUrl: base('TWILIO_BASE_URL') };
    }
    case '46elks': {
      const username = need('ELKS_API_USERNAME');
      const password = need('ELKS_API_PASSWORD');
      const from = need('ELKS_FROM');
      if (!ELKS_SENDER.test(from)) {
        throw new ConfigError('ELKS_FROM must be a sender ID of 3–11 letters and digits starting with a letter, or an E.164 number');
      }
      return { provider, username, password, from, baseUrl: base('ELKS_BASE_URL') };
    }
    case 'vonage':
      return {
        provider,
        apiKey: need('VONAGE_API_KEY'),
        apiSecret: need('VONAGE_API_SECRET'),
        from: need('VONAGE_FROM'),
        baseUrl: base('VONAGE_BASE_URL'),
      };
    case 'webhook':
      need('SMS_WEBHOOK_URL');
      return { provider, url: httpUrl(env, 'SMS_WEBHOOK_URL') as string, secret: opt('SMS_WEBHOOK_SECRET') };
    default:
      throw new ConfigError(`SMS_PROVIDER must be one of ${SMS_PROVIDERS.join(', ')} (or unset)`);
  }
}
