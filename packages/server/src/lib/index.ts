/**
 * App-agnostic helpers: time (clock.ts: the injected clock, so token decisions test with a
 * fake one, and the wire format of time, `iso` and `isoSql`), crypto (CSPRNG tokens and codes,
 * SHA-256, constant-time comparison), `singleFlight` (a reload run one at a time), `openWorker` (every background loop) and
 * `retryAfterMs`, `isUuid`, cron expressions (cron.ts, function schedules),
 * the tar format of backups, "did you mean" suggestions, the address guard of requests made for
 * someone else (webhooks, OpenID Connect providers: address.ts). Imports nothing of src.
 */
export {
  type AddressGuardOptions,
  checkHost,
  guardedLookup,
  isBlockedAddress,
  isLoopbackAddress,
  isRefusedAddress,
  type LookupFunction,
  RefusedAddressError,
} from './address.js';
export { createGuardedFetch, type GuardedFetch, type GuardedInit, UnreachableError } from './guarded-fetch.js';
export { type Clock, iso, isoSql, systemClock } from './clock.js';
export { type Cron, CronError, cronMatches, nextRun, parseCron, runsBetween } from './cron.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
export { singleFlight } from './single-flight.js';
export { readTar, TAR_END, type TarEntry, type TarHeader, tarHeader, tarPadding } from './tar.js';
export { closest, editDistance } from './suggest.js';
export { isUuid } from './uuid.js';
export { openWorker, retryAfterMs, type Worker, type WorkerOptions } from './worker.js';
