/**
 * App-agnostic helpers: the clock (injected, so token decisions test with a fake one) and
 * crypto (CSPRNG tokens and codes, SHA-256, constant-time comparison), the tar format of
 * backups, "did you mean" suggestions. Imports nothing of src.
 */
export { type Clock, systemClock } from './clock.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
export { readTar, TAR_END, type TarEntry, type TarHeader, tarHeader, tarPadding } from './tar.js';
export { closest, editDistance } from './suggest.js';
