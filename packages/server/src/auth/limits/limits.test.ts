import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.js';
import { fakeClock } from '../../lib/clock.js';
import { createAuthLimits, createMemoryCounter } from './index.js';

const rules = {
  signinFailuresPerEmail: { max: 3, windowSeconds: 900 },
  signinFailuresPerEmailAllIps: { max: 6, windowSeconds: 900 },
  signinFailuresPerIp: { max: 5, windowSeconds: 900 },
  emailsPerRecipient: { max: 1, windowSeconds: 60 },
  emailsToUnknownPerIp: { max: 2, windowSeconds: 3600 },
  codesPerPhoneMinute: { max: 1, windowSeconds: 60 },
  codesPerPhoneHour: { max: 5, windowSeconds: 3600 },
  codesPerIp: { max: 8, windowSeconds: 3600 },
  mfaFailuresPerUser: { max: 30, windowSeconds: 900 },
};

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('memory counter', () => {
  it('counts in a fixed window that resets with the clock', async () => {
    const clock = fakeClock(0);
    const c = createMemoryCounter(clock);
    expect(await c.hit('k', 60)).toEqual({ count: 1, resetMs: 60_000 });
    clock.advance(59_000);
    expect(await c.hit('k', 60)).toEqual({ count: 2, resetMs: 1000 });
    expect(await c.peek('k')).toEqual({ count: 2, resetMs: 1000 });
    clock.advance(1000);
    expect(await c.peek('k')).toEqual({ count: 0, resetMs: 0 });
    expect((await c.hit('k', 60)).count).toBe(1);
  });

  it('stays bounded under many distinct keys', async () => {
    const c = createMemoryCounter(fakeClock(0), 100);
    for (let i = 0; i < 1000; i++) await c.hit(`k${i}`, 60);
    expect((await c.peek('k999')).count).toBe(1);
    expect((await c.peek('k0')).count).toBe(0);
  });
});

describe('auth limits', () => {
  it('refuses sign-in after the failures per email from one IP, with Retry-After; the owner elsewhere is not locked out', async () => {
    const clock = fakeClock(0);
    const limits = createAuthLimits(createMemoryCounter(clock), rules);
    for (let i = 0; i < 3; i++) {
      await limits.assertSignin('a@x.io', '10.0.0.1');
      await limits.signinFailed('a@x.io', '10.0.0.1');
    }
    const err = await rejection(limits.assertSignin('a@x.io', '10.0.0.1'));
    expect(err.code).toBe('rate_limited');
    expect(err.status).toBe(429);
    expect(err.headers?.['retry-after']).toBe('900');
    await limits.assertSignin('a@x.io', '10.0.0.9'); // the same email from another IP is not affected
    await limits.assertSignin('b@x.io', '10.0.0.1'); // another email from this IP neither
    clock.advance(900_000);
    await limits.assertSignin('a@x.io', '10.0.0.1');
  });

  it('refuses sign-in after the failures per email from all IPs together (a distributed guesser)', async () => {
    const limits = createAuthLimits(createMemoryCounter(fakeClock(0)), rules);
    for (let i = 0; i < 6; i++) await limits.signinFailed('a@x.io', `10.0.1.${i}`);
    expect((await rejection(limits.assertSignin('a@x.io', '10.0.2.1'))).code).toBe('rate_limited');
    await limits.assertSignin('b@x.io', '10.0.2.1');
  });

  it('counts emails per mailbox: +tags, and dots on Gmail, share one budget', async () => {
    const limits = createAuthLimits(createMemoryCounter(fakeClock(0)), rules);
    await limits.assertEmail('ada.lovelace@gmail.com');
    expect((await rejection(limits.assertEmail('adalovelace+x@gmail.com'))).code).toBe('rate_limited');
    expect(await limits.emailDelay('a.d.a.lovelace+y@googlemail.com')).toBeGreaterThan(0);
    await limits.assertEmail('bob@example.com');
    expect((await rejection(limits.assertEmail('bob+news@example.com'))).code).toBe('rate_limited');
    await limits.assertEmail('b.ob@example.com'); // dots matter outside Gmail
  });

  it('budgets mail to addresses without an account per IP', async () => {
    const limits = createAuthLimits(createMemoryCounter(fakeClock(0)), rules);
    expect(await limits.tryUnknownRecipient('10.3.0.1')).toBe(true);
    expect(await limits.tryUnknownRecipient('10.3.0.1')).toBe(true);
    expect(await limits.tryUnknownRecipient('10.3.0.1')).toBe(false);
    expect(await limits.tryUnknownRecipient('10.3.0.2')).toBe(true);
  });

  it('refuses sign-in after the failures per IP, whatever the email', async () => {
    const limits = createAuthLimits(createMemoryCounter(fakeClock(0)), rules);
    for (let i = 0; i < 5; i++) await limits.signinFailed(`u${i}@x.io`, '10.1.1.1');
    expect((await rejection(limits.assertSignin('new@x.io', '10.1.1.1'))).code).toBe('rate_limited');
    await limits.assertSignin('new@x.io', '10.1.1.2');
  });

  it('allows one email a minute per recipient', async () => {
    const clock = fakeClock(0);
    const limits = createAuthLimits(createMemoryCounter(clock), rules);
    await limits.assertEmail('a@x.io');
    const err = await rejection(limits.assertEmail('a@x.io'));
    expect(err.headers?.['retry-after']).toBe('60');
    // A mail that may not go now is held back until the window ends (a sign-up's), never dropped.
    clock.advance(15_000);
    expect(await limits.emailDelay('a@x.io')).toBe(45_000);
    expect(await limits.emailDelay('b@x.io')).toBe(0);
    clock.advance(45_000);
    await limits.assertEmail('a@x.io');
  });

  it('phone codes: one a minute and five an hour per number, and a ceiling per IP', async () => {
    const clock = fakeClock(0);
    const limits = createAuthLimits(createMemoryCounter(clock), rules);
    await limits.assertPhoneCode('+46701234567', '10.2.0.1');
    const minute = await rejection(limits.assertPhoneCode('+46701234567', '10.2.0.2'));
    expect(minute.headers?.['retry-after']).toBe('60');
    for (let i = 0; i < 4; i++) {
      clock.advance(60_000);
      await limits.assertPhoneCode('+46701234567', '10.2.0.1');
    }
    clock.advance(60_000);
    const hour = await rejection(limits.assertPhoneCode('+46701234567', '10.2.0.1'));
    expect(hour.code).toBe('rate_limited');
    expect(Number(hour.headers?.['retry-after'])).toBeGreaterThan(60);
    // A refused request did not use up the allowance: the hour resets, codes flow again.
    clock.advance(3600_000);
    await limits.assertPhoneCode('+46701234567', '10.2.0.3');

    // One IP pumping many numbers: 8 an hour, then refused whatever the number.
    for (let i = 0; i < 8; i++) await limits.assertPhoneCode(`+4670123450${i}`, '10.9.9.9');
    expect((await rejection(limits.assertPhoneCode('+46701234599', '10.9.9.9'))).code).toBe('rate_limited');
    await limits.assertPhoneCode('+46701234599', '10.9.9.8');
  });
});
