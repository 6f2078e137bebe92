/**
 * App-agnostic helpers: the clock (injected, so token decisions test with a fake one),
 * crypto (CSPRNG tokens and codes, SHA-256, constant-time comparison) and the wire format of
 * time (`iso`, `isoSql`), a reload run one at a time (`singleFlight`). Imports nothing of src.
 */
export { type Clock, systemClock } from './clock.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
export { iso, isoSql } from './time.js';
export { singleFlight } from './single-flight.js';
export { isUuid } from './uuid.js';
