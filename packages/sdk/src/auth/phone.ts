import type { Result, Session } from '../types.js';
import { type AuthContext, call, completeSignIn, type SignInData } from './context.js';

/**
 * Texts a 6-digit code to an E.164 number (POST /v1/auth/phone/send-otp). Needs a paid plan
 * (`paid_plan_required` otherwise) and an SMS provider (`sms_not_configured`).
 * @example const { error } = await sendPhoneCode(ctx, '+46701234567');
 */
export async function sendPhoneCode(ctx: AuthContext, phone: string): Promise<Result<{ sent: boolean }>> {
  return call<{ sent: boolean }>(ctx, { method: 'POST', path: '/v1/auth/phone/send-otp', body: { phone } });
}

/**
 * Signs in with the texted code (POST /v1/auth/phone/verify). Five wrong tries void the code.
 * @example const { data, error } = await verifyPhoneCode(ctx, '+46701234567', '123456');
 */
export async function verifyPhoneCode(ctx: AuthContext, phone: string, code: string): Promise<Result<SignInData>> {
  return completeSignIn(ctx, await call<Session>(ctx, { method: 'POST', path: '/v1/auth/phone/verify', body: { phone, code } }));
}
