/**
 * The database webhooks section of the config (docs/webhooks.md): whether private addresses may
 * be called, the retry schedule and the answer timeout. Every wrong value is a one-line
 * `config: …` error.
 */
import { bool, ConfigError, type Env } from './parse.js';
import { duration } from './realtime.js';

export interface WebhooksConfig {
  /**
   * `WEBHOOK_ALLOW_PRIVATE`: URLs that resolve to loopback, private, link-local or metadata
   * addresses may be called (default false: refused at save and at each send).
   */
  allowPrivate: boolean;
  /** `WEBHOOK_RETRY_MIN`: the wait after the first failed attempt, doubled after each (1 s). */
  retryMinMs: number;
  /** `WEBHOOK_RETRY_MAX`: the longest wait between two attempts (1 h). */
  retryMaxMs: number;
  /** `WEBHOOK_RETRY_WINDOW`: a delivery still failing this long after its change is given up, `failed` (3 days). */
  retryWindowMs: number;
  /** `WEBHOOK_TIMEOUT`: how long an attempt waits for the receiver's whole answer (10 s). */
  timeoutMs: number;
}

/**
 * Reads the WEBHOOK_* variables.
 * @example parseWebhooks({ WEBHOOK_RETRY_WINDOW: '1d' }).retryWindowMs // 86400000
 */
export function parseWebhooks(env: Env): WebhooksConfig {
  const config: WebhooksConfig = {
    allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    retryMinMs: duration(env, 'WEBHOOK_RETRY_MIN', 1000),
    retryMaxMs: duration(env, 'WEBHOOK_RETRY_MAX', 3_600_000),
    retryWindowMs: duration(env, 'WEBHOOK_RETRY_WINDOW', 3 * 86_400_000),
    timeoutMs: duration(env, 'WEBHOOK_TIMEOUT', 10_000),
  };
  if (config.retryMaxMs < config.retryMinMs) {
    throw new ConfigError(`WEBHOOK_RETRY_MAX must be at least WEBHOOK_RETRY_MIN (${config.retryMinMs} ms)`);
  }
  return config;
}
