/**
 * Which addresses a request the server makes for someone else may reach: a webhook's URL
 * (webhooks/address.ts, docs/webhooks.md "Safety") and an OpenID Connect provider's issuer,
 * key set, token and userinfo endpoints (auth/oauth, docs/security.md). Whoever chooses those
 * URLs manages the project, but the server runs next to things the project must not reach
 * through it: its own loopback services, the private network, the cloud's metadata endpoints
 * (169.254.169.254, fd00:ec2::254, Azure's 168.63.129.16). `checkHost` refuses them at save,
 * `guardedLookup` on the address every socket actually connects to: a name that resolved to a
 * public address at save and to 127.0.0.1 later (DNS rebinding) is refused then.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (also Alibaba's metadata, 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['168.63.129.16', 32], // Azure's WireServer (its VM agent and metadata channel)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(net, bits, 'ipv6');
}

/** The IPv4 address inside an IPv6 one that carries it (mapped, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const groups = expandIpv6(lower);
  if (!groups) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64)
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6], groups[7]);
  if (zero(0, 6) && (groups[6] !== 0 || groups[7] > 1)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6], groups[7]);
  // 2002:AABB:CCDD::/48 (6to4)
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 allowed), or null. */
function expandIpv6(ip: string): number[] | null {
  let text = ip.replace(/%.*$/, '');
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number);
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const h = parse(head);
  const r = parse(rest);
  const fill = rest === undefined ? 0 : 8 - h.length - r.length;
  const out = [...h, ...new Array(Math.max(0, fill)).fill(0), ...r];
  return out.length === 8 && out.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? out : null;
}

/**
 * True for an address the server does not reach for someone else: loopback, private,
 * link-local (metadata), carrier-grade NAT, multicast, reserved, documentation ranges, and IPv6
 * addresses that carry one of those IPv4 addresses (`::ffff:127.0.0.1`, NAT64, 6to4). Anything
 * that is not an IP address counts as blocked.
 * @example isBlockedAddress('169.254.169.254') // true
 * @example isBlockedAddress('93.184.216.34') // false
 */
export function isBlockedAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip.replace(/%.*$/, ''));
  if (family === 4) return BLOCKED.check(ip, 'ipv4');
  if (family !== 6) return true;
  const bare = ip.replace(/%.*$/, '');
  if (BLOCKED.check(bare, 'ipv6')) return true;
  const v4 = embeddedIpv4(bare);
  return v4 !== null && BLOCKED.check(v4, 'ipv4');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A connection or a save refused because of the address; `advice` says what would allow it. */
export class RefusedAddressError extends Error {
  readonly code = 'EADDRESSREFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    advice = '',
  ) {
    super(`${host} resolves to ${address}, a loopback, private, link-local or metadata address: refused${advice ? ` (${advice})` : ''}`);
    this.name = 'RefusedAddressError';
  }
}

/**
 * True for a loopback address: 127.0.0.0/8, ::1, and ::ffff:127.x.y.z (the mapped form).
 * @example isLoopbackAddress('::ffff:127.0.0.1') // true
 */
export function isLoopbackAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return LOOPBACK.check(ip, 'ipv4');
  if (family !== 6) return false;
  if (LOOPBACK.check(ip, 'ipv6')) return true;
  const groups = expandIpv6(ip.toLowerCase());
  if (!groups?.slice(0, 5).every((g) => g === 0) || groups[5] !== 0xffff) return false;
  return groups[6] >> 8 === 127; // ::ffff:127.x.y.z
}

/** What a guard lets through besides public addresses, and what its refusals advise. */
export interface AddressGuardOptions {
  /** Loopback addresses pass (an OpenID Connect provider on the developer's own machine). */
  allowLoopback?: boolean;
  /** Appended to a refusal's message: the setting that would allow it. */
  advice?: string;
}

/** Whether a guard with `options` refuses `address`. */
export function isRefusedAddress(address: string, options: AddressGuardOptions = {}): boolean {
  if (options.allowLoopback && isLoopbackAddress(address)) return false;
  return isBlockedAddress(address);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * The `lookup` a guarded socket resolves its host with: the system resolver's answer, refused
 * when any address it gives is blocked. Every connection resolves through it and connects to
 * what it returned, so the address checked is the address connected to (no second lookup an
 * attacker's DNS could answer differently). Handles both callback shapes (`all: true`, which
 * Node's happy-eyeballs connect asks for, and a single address).
 * @example http.request(url, { lookup: guardedLookup(dns.lookup) })
 */
export function guardedLookup(
  resolve: LookupFunction = dnsLookup as unknown as LookupFunction,
  guard: AddressGuardOptions = {},
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = (Array.isArray(addresses) ? addresses : [{ address: String(addresses), family: 4 }]) as LookupAddress[];
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      const bad = list.find((a) => isRefusedAddress(a.address, guard));
      if (bad) return callback(new RefusedAddressError(hostname, bad.address, guard.advice), '');
      if (options.all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * Resolves a URL's host as a send would, and throws RefusedAddressError when it reaches a blocked
 * address (an IP literal is checked as is). Resolution errors are thrown as they come (ENOTFOUND…).
 * @example await checkHost('hooks.example.com') // resolves, or throws RefusedAddressError
 */
export async function checkHost(
  host: string,
  resolve: LookupFunction = dnsLookup as unknown as LookupFunction,
  options: AddressGuardOptions = {},
): Promise<void> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    if (isRefusedAddress(bare, options)) throw new RefusedAddressError(host, bare, options.advice);
    return;
  }
  await new Promise<void>((ok, fail) => {
    guardedLookup(resolve, options)(bare, { all: true }, (err) => (err ? fail(err) : ok()));
  });
}
