/**
 * The realtime section of the config (docs/realtime.md): how long changes are kept for resumes,
 * and the limits of the WebSocket endpoint. Every wrong value is a one-line `config: …` error.
 */
import { ConfigError, type Env, int, size } from './parse.js';

export interface RealtimeConfig {
  /** `REALTIME_RETENTION`: changes are kept at least this long for `since` (default 24 h). */
  retentionMs: number;
  /** `REALTIME_MAX_SUBSCRIPTIONS`: subscriptions per connection (100). */
  maxSubscriptions: number;
  /** `REALTIME_MAX_CONNECTIONS_PER_IP`: open WebSockets per client IP (1000). */
  maxConnectionsPerIp: number;
  /** `REALTIME_MAX_SUBSCRIPTIONS_PER_IP`: subscriptions per client IP, over all its connections (1000). */
  maxSubscriptionsPerIp: number;
  /**
   * `REALTIME_MAX_REPLAY`: the most changes a `since` may ask to replay (10,000, counted on the
   * log's numbering, which every table shares); further back is `resume_gap` (refetch, then subscribe).
   */
  maxReplay: number;
  /** `REALTIME_MAX_MESSAGE_SIZE`: the largest client message; a larger one closes the socket (64 KiB). */
  maxMessageBytes: number;
  /**
   * `REALTIME_MAX_BUFFERED`: what may wait unsent for one client before it is dropped as too slow
   * (4 MiB); it reconnects and resumes with `since`, so nothing is lost.
   */
  maxBufferedBytes: number;
  /** `REALTIME_HEARTBEAT_SECONDS`: a WebSocket ping this often; two missed pongs drop the client (25). */
  heartbeatMs: number;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration: seconds as a plain integer, or a number with a unit (`90s`, `30m`, `24h`, `7d`).
 * @example duration({ REALTIME_RETENTION: '24h' }, 'REALTIME_RETENTION', 1) // 86400000
 */
export function duration(env: Env, name: string, fallbackMs: number): number {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return fallbackMs;
  const m = /^(\d+)\s*(ms|s|m|h|d)?$/i.exec(value);
  const ms = m ? Number(m[1]) * UNIT_MS[(m[2] ?? 's').toLowerCase()] : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new ConfigError(`${name} must be a duration such as 86400, 90m, 24h or 7d, got "${value}"`);
  return ms;
}

/**
 * Reads the REALTIME_* variables.
 * @example parseRealtime({ REALTIME_RETENTION: '2h' }).retentionMs // 7200000
 */
export function parseRealtime(env: Env): RealtimeConfig {
  return {
    retentionMs: duration(env, 'REALTIME_RETENTION', 24 * 3_600_000),
    maxSubscriptions: int(env, 'REALTIME_MAX_SUBSCRIPTIONS', 100, { min: 1 }),
    maxConnectionsPerIp: int(env, 'REALTIME_MAX_CONNECTIONS_PER_IP', 1000, { min: 1 }),
    maxSubscriptionsPerIp: int(env, 'REALTIME_MAX_SUBSCRIPTIONS_PER_IP', 1000, { min: 1 }),
    maxReplay: int(env, 'REALTIME_MAX_REPLAY', 10_000, { min: 1 }),
    maxMessageBytes: size(env, 'REALTIME_MAX_MESSAGE_SIZE', 64 * 1024),
    maxBufferedBytes: size(env, 'REALTIME_MAX_BUFFERED', 4 * 1024 * 1024),
    heartbeatMs: int(env, 'REALTIME_HEARTBEAT_SECONDS', 25, { min: 1 }) * 1000,
  };
}
