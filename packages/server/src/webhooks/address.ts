/**
 * Which addresses a webhook may reach (docs/webhooks.md "Safety"): the server's address guard
 * (lib/address.ts, shared with the OpenID Connect calls of auth/oauth), its refusals advising
 * WEBHOOK_ALLOW_PRIVATE=true. Loopback, private, link-local and metadata addresses are refused
 * at save (`checkHost`) and again at every send, on the address the socket actually connects to
 * (`guardedLookup`).
 */
import { checkHost as checkGuardedHost, guardedLookup as guardedLookupOf, type LookupFunction, RefusedAddressError } from '../lib/index.js';

export { isBlockedAddress, type LookupFunction, RefusedAddressError } from '../lib/index.js';

const GUARD = { advice: 'WEBHOOK_ALLOW_PRIVATE=true allows it' };

/** A webhook's refusal of `address` (the resolved or literal address of `host`). */
export const refused = (host: string, address: string) => new RefusedAddressError(host, address, GUARD.advice);

/**
 * The `lookup` of a webhook's socket: lib/address.ts `guardedLookup`, refusals naming WEBHOOK_ALLOW_PRIVATE.
 * @example http.request(url, { lookup: guardedLookup(dns.lookup) })
 */
export const guardedLookup = (resolve?: LookupFunction): LookupFunction => guardedLookupOf(resolve, GUARD);

/**
 * The save-time check of a webhook's host: lib/address.ts `checkHost`, refusals naming WEBHOOK_ALLOW_PRIVATE.
 * @example await checkHost('hooks.example.com') // resolves, or throws RefusedAddressError
 */
export const checkHost = (host: string, resolve?: LookupFunction): Promise<void> => checkGuardedHost(host, resolve, GUARD);
