/**
 * App-agnostic helpers: time (clock.ts: the injected clock, so token decisions test with a
 * fake one, and the wire format of time, `iso` and `isoSql`), crypto (CSPRNG tokens and codes,
 * SHA-256, constant-time comparison), `singleFlight` (a reload run one at a time) and `isUuid`.
 * Imports nothing of src.
 */
export { type Clock, iso, isoSql, systemClock } from './clock.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
export { singleFlight } from './single-flight.js';
export { isUuid } from './uuid.js';
