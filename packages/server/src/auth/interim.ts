// TEMPORARY: stand-ins for SettingsStore and Outbox until settings/ and messaging/ land on
// the Plinth object (app.ts). Only what auth uses. Delete this file at integration.
import type { Queryable } from '../db/index.js';
import type { OutgoingMessage, Outbox } from '../messaging/types.js';
import type { AuthSettings, SettingsStore } from '../settings/types.js';

const provider = { enabled: false, client_id: null, client_secret: null };

export function interimSettings(): Pick<SettingsStore, 'auth' | 'isRedirectAllowed' | 'updateAuth'> {
  let s: AuthSettings = {
    email_password_enabled: true,
    magic_link_enabled: false,
    phone_enabled: false,
    min_password_length: 8,
    require_email_confirmation: false,
    session_duration_seconds: 3600,
    allowed_redirect_urls: [],
    cors_origins: [],
    email_verification_url: null,
    password_reset_url: null,
    magic_link_url: null,
    providers: {
      google: provider,
      github: provider,
      linkedin: provider,
      microsoft: provider,
      apple: { enabled: false, service_id: null, team_id: null, key_id: null, private_key: null },
    },
    email_templates: {},
  };
  return {
    auth: () => s,
    isRedirectAllowed: (url) =>
      s.allowed_redirect_urls.some((a) => {
        try {
          const u = new URL(url);
          const e = new URL(a);
          return u.origin === e.origin && (u.pathname === e.pathname || u.pathname.startsWith(`${e.pathname.replace(/\/$/, '')}/`));
        } catch {
          return false;
        }
      }),
    async updateAuth(patch) {
      s = { ...s, ...(patch as Partial<AuthSettings>) };
      return s;
    },
  };
}

export function captureOutbox(): Outbox & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    sent,
    async enqueue(_tx: Queryable, message: OutgoingMessage) {
      sent.push(message);
      return String(sent.length);
    },
    kick() {},
  };
}
