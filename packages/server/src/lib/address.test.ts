import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { checkHost, isLoopbackAddress, isRefusedAddress, type LookupFunction, RefusedAddressError } from './address.js';

// The address guard's loopback allowance (OpenID Connect providers while PUBLIC_URL is loopback):
// loopback only, never the private network or metadata; the refusal's advice is the caller's.

describe('isLoopbackAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['::ffff:10.0.0.1', false],
    ['0.0.0.0', false],
    ['localhost', false],
  ])('%s → %s', (address, loopback) => expect(isLoopbackAddress(address)).toBe(loopback));
});

describe('a guard that allows loopback', () => {
  it('lets loopback through and still refuses private, metadata and Azure WireServer addresses', () => {
    for (const a of ['127.0.0.1', '::1']) expect(isRefusedAddress(a, { allowLoopback: true })).toBe(false);
    for (const a of ['10.0.0.1', '192.168.1.1', '169.254.169.254', '168.63.129.16', '0.0.0.0', 'fd00:ec2::254'])
      expect(isRefusedAddress(a, { allowLoopback: true })).toBe(true);
    expect(isRefusedAddress('127.0.0.1')).toBe(true);
  });

  it('checks a resolved name the same way, with the caller’s advice in the refusal', async () => {
    const to =
      (address: string): LookupFunction =>
      (_h, _o, cb) =>
        cb(null, [{ address, family: 4 } as LookupAddress]);
    await expect(checkHost('dev.test', to('127.0.0.1'), { allowLoopback: true })).resolves.toBeUndefined();
    const err = await checkHost('dev.test', to('127.0.0.1'), { advice: 'X=1 allows it' }).catch((e) => e);
    expect(err).toBeInstanceOf(RefusedAddressError);
    expect(err.message).toBe(
      'dev.test resolves to 127.0.0.1, a loopback, private, link-local or metadata address: refused (X=1 allows it)',
    );
    await expect(checkHost('dev.test', to('10.1.2.3'), { allowLoopback: true })).rejects.toBeInstanceOf(RefusedAddressError);
  });
});
