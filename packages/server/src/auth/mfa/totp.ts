import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. */
const PERIOD = 30;

/**
 * A new TOTP secret (20 random bytes from the CSPRNG, base32) with its `otpauth://` URI and the
 * URI as a QR code (an SVG data URL, for `<img src>`).
 * @example const { secret, uri, qr_code } = await newTotp('Plinth project', 'ada@example.com');
 */
export async function newTotp(issuer: string, label: string): Promise<{ secret: string; uri: string; qr_code: string }> {
  const secret = new Secret({ size: 20 });
  const totp = new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret });
  const uri = totp.toString();
  // Loaded at the first enrolment, not at start (issue 32).
  const QRCode = (await import('qrcode')).default;
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret: secret.base32, uri, qr_code: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/**
 * The time step a 6-digit code is good for at `now` (±1 step for clocks that drift), or null.
 * The caller refuses a step it accepted before, so each code works once.
 * @example const step = totpStep(secret, '123456', clock.now()); if (step === null || step <= lastStep) refuse();
 */
export function totpStep(secret: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secret) });
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

/**
 * The code of a secret at a time (tests, and the console's nothing: never sent by the server).
 * @example totpCode(secret, Date.now()) // '492039'
 */
export function totpCode(secret: string, now: number): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secret) }).generate({ timestamp: now });
}
