import { js } from '../../lib/rest';

/**
 * The SDK call of an auth endpoint (`client.auth.…`), from the body the explorer sent; null when
 * the SDK has no call for it (then the cURL snippet is the way). The SDK keeps the session it
 * gets, so these calls take no token. No DOM.
 */

type Body = Record<string, unknown>;
const S = (b: Body, k: string) => js(typeof b[k] === 'string' ? b[k] : '');

const CALLS: Record<string, (b: Body, params: Record<string, string>) => string> = {
  'POST /v1/auth/signup': (b) => `client.auth.signUp(${js(b)})`,
  'POST /v1/auth/signin': (b) => `client.auth.signIn({ email: ${S(b, 'email')}, password: ${S(b, 'password')} })`,
  'POST /v1/auth/signout': (b) => `client.auth.signOut(${typeof b.scope === 'string' ? js({ scope: b.scope }) : ''})`,
  'POST /v1/auth/refresh': () => 'client.auth.refreshSession()',
  'GET /v1/auth/user': () => 'client.auth.getUser()',
  'PATCH /v1/auth/user': (b) => `client.auth.updateUser(${js(b)})`,
  'POST /v1/auth/reauthenticate': () => 'client.auth.reauthenticate()',
  'POST /v1/auth/verify-email': (b) => `client.auth.verifyEmail(${S(b, 'token')})`,
  'POST /v1/auth/resend-verification': (b) => `client.auth.resendVerification(${S(b, 'email')})`,
  'POST /v1/auth/forgot-password': (b) => `client.auth.forgotPassword(${S(b, 'email')})`,
  'POST /v1/auth/reset-password': (b) => `client.auth.resetPassword(${S(b, 'token')}, ${S(b, 'password')})`,
  'POST /v1/auth/request-magic-link': (b) => `client.auth.requestMagicLink(${S(b, 'email')})`,
  'POST /v1/auth/signin-magic-link': (b) => `client.auth.signInWithMagicLink(${S(b, 'token')})`,
  'POST /v1/auth/phone/send-otp': (b) => `client.auth.sendPhoneCode(${S(b, 'phone')})`,
  'POST /v1/auth/phone/verify': (b) => `client.auth.verifyPhoneCode(${S(b, 'phone')}, ${S(b, 'code')})`,
  'GET /v1/auth/oauth/{provider}': (_b, p) =>
    `client.auth.signInWithOAuth(${js(p.provider ?? 'github')}, { redirectTo: 'https://your.app/callback' })`,
};

/**
 * @example authSdkCall('POST', '/v1/auth/signin', { email: 'a@b.c', password: 'x' }, {})
 *   // "client.auth.signIn({ email: 'a@b.c', password: 'x' })"
 */
export function authSdkCall(method: string, path: string, body: unknown, params: Record<string, string>): string | null {
  const make = CALLS[`${method} ${path}`];
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Body) : {};
  return make ? make(b, params) : null;
}
