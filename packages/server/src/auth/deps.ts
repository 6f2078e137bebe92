import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/clock.js';
import type { Outbox } from '../messaging/types.js';
import type { SettingsStore } from '../settings/types.js';
import type { Accounts } from './accounts/index.js';
import type { AuthConfig } from './config.js';
import type { AuthLimits } from './limits/index.js';
import type { PasswordHasher } from './password/hasher.js';
import type { TokenService } from './sessions/jwt.js';

/** Everything the auth services need, built once by the composition root (no singletons). */
export interface AuthDeps {
  db: Db;
  tokens: TokenService;
  clock: Clock;
  settings: Pick<SettingsStore, 'auth' | 'project' | 'isRedirectAllowed'>;
  outbox: Outbox;
  /** Whether an SMS provider (or the dev inbox) is configured: phone codes answer 503 otherwise. */
  smsConfigured: boolean;
  config: AuthConfig;
  hasher: PasswordHasher;
  limits: AuthLimits;
  /** Every write to users, passwords, identities and sessions (accounts/). */
  accounts: Accounts;
  log: Logger;
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
