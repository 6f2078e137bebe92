import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/index.js';
import type { Outbox } from '../messaging/index.js';
import type { SettingsStore } from '../settings/index.js';
import type { Accounts } from './accounts/index.js';
import type { AuthConfig, OAuthEndpoints } from '../config/index.js';
import type { CallerGuards } from '../http/index.js';
import type { SessionGate } from './sessions/gate.js';
import type { SessionState } from './sessions/state.js';
import type { AuthLimits } from './limits/index.js';
import type { PasswordHasher } from './password/hasher.js';
import type { TokenService } from './sessions/jwt.js';
import type { OidcDiscovery } from './oauth/oidc/discovery.js';
import type { AuthHooks } from './hooks.js';

/** What the composition root hands the auth area (registerAuth). */
export interface AuthOptions {
  db: Db;
  tokens: TokenService;
  clock: Clock;
  settings: Pick<SettingsStore, 'auth' | 'project' | 'isRedirectAllowed'>;
  outbox: Outbox;
  /** Whether an SMS provider (or the dev inbox) is configured: phone codes answer 503 otherwise. */
  smsConfigured: boolean;
  log: Logger;
  /** Who is calling (http/guards.ts). */
  callers: CallerGuards;
  /** The auth tunables (config.auth). */
  config: AuthConfig;
  /** Built before the principal resolver, which refuses tokens of ended sessions through it. */
  gate: SessionGate;
  /** The social providers' endpoints (config.oauth). */
  oauth: OAuthEndpoints;
  /** Discovery documents and key sets of OpenID Connect providers (shared with the settings check). */
  discovery: OidcDiscovery;
  /** Tests only: count or replace the password hasher. */
  hasher?: PasswordHasher;
}

/** Everything the auth services need, built once from the options (no singletons). */
export interface AuthDeps extends Omit<AuthOptions, 'callers' | 'gate' | 'oauth' | 'discovery' | 'hasher'> {
  hasher: PasswordHasher;
  limits: AuthLimits;
  /** Every write to users, passwords and identities (accounts/). */
  accounts: Accounts;
  /** Opening and ending sessions (sessions/state.ts). */
  sessionState: SessionState;
  /** The project's auth hooks (hooks.ts): the access token's claims, a new user. */
  hooks: AuthHooks;
  /**
   * Work done after the answer is sent (so known and unknown emails answer alike): each
   * promise is tracked, so tests and shutdown can wait for it.
   */
  later(work: () => Promise<void>): void;
}

/** What a service learns about the caller: plain values, never the HTTP request (convention 9). */
export interface ClientInfo {
  ip: string;
  userAgent: string | null;
}
