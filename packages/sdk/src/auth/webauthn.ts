/**
 * The browser's own WebAuthn API, no client library: options arrive as JSON from the server
 * (`PublicKeyCredentialCreationOptionsJSON` / `…RequestOptionsJSON`), are turned into the
 * objects `navigator.credentials` takes (`PublicKeyCredential.parse…FromJSON` where the
 * browser has it, else a small base64url conversion), and the credential goes back as JSON
 * (`credential.toJSON()` where present, else the same conversion).
 */
import type { PlinthError, Result } from '../types.js';

type Json = Record<string, unknown>;

interface PublicKeyCredentialStatic {
  parseCreationOptionsFromJSON?: (o: Json) => PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON?: (o: Json) => PublicKeyCredentialRequestOptions;
}

const b64urlToBytes = (s: string): ArrayBuffer => {
  const b64 = s
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(s.length / 4) * 4, '=');
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
};
const bytesToB64url = (b: ArrayBuffer | ArrayBufferView | null | undefined): string | undefined => {
  if (!b) return undefined;
  const bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const withIds = (list: unknown) => (Array.isArray(list) ? list.map((c: Json) => ({ ...c, id: b64urlToBytes(String(c.id)) })) : undefined);

function api(): (typeof globalThis & { PublicKeyCredential: PublicKeyCredentialStatic }) | null {
  const g = globalThis as typeof globalThis & { PublicKeyCredential?: PublicKeyCredentialStatic };
  return g.PublicKeyCredential && typeof navigator !== 'undefined' && navigator.credentials
    ? (g as typeof globalThis & { PublicKeyCredential: PublicKeyCredentialStatic })
    : null;
}

function fail(code: PlinthError['code'], message: string): Result<never> {
  return { data: null, error: { code, message, status: 0 } };
}

/** The credential as the JSON the server verifies. */
function toJson(cred: PublicKeyCredential): Json {
  const own = (cred as PublicKeyCredential & { toJSON?: () => Json }).toJSON;
  if (typeof own === 'function') return own.call(cred);
  const r = cred.response as AuthenticatorResponse & Partial<AuthenticatorAttestationResponse & AuthenticatorAssertionResponse>;
  const response: Json = { clientDataJSON: bytesToB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = bytesToB64url(r.attestationObject);
    response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
  }
  if (r.authenticatorData) response.authenticatorData = bytesToB64url(r.authenticatorData);
  if (r.signature) response.signature = bytesToB64url(r.signature);
  if (r.userHandle) response.userHandle = bytesToB64url(r.userHandle);
  return {
    id: cred.id,
    rawId: bytesToB64url(cred.rawId),
    type: cred.type,
    response,
    clientExtensionResults: cred.getClientExtensionResults?.() ?? {},
    authenticatorAttachment: (cred as PublicKeyCredential & { authenticatorAttachment?: string }).authenticatorAttachment ?? undefined,
  };
}

const cancelled = (err: unknown) =>
  fail(
    'webauthn_cancelled',
    `The browser did not create or use a passkey: ${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? err}`,
  );

/**
 * Creates a passkey from the server's creation options; its JSON for `…/verify`.
 * @example const { data: credential } = await createCredential(options);
 */
export async function createCredential(options: Json): Promise<Result<Json>> {
  const g = api();
  if (!g) return fail('webauthn_unavailable', 'This environment has no WebAuthn (navigator.credentials); passkeys need a browser.');
  const publicKey =
    g.PublicKeyCredential.parseCreationOptionsFromJSON?.(options) ??
    ({
      ...options,
      challenge: b64urlToBytes(String(options.challenge)),
      user: { ...(options.user as Json), id: b64urlToBytes(String((options.user as Json).id)) },
      excludeCredentials: withIds(options.excludeCredentials),
    } as unknown as PublicKeyCredentialCreationOptions);
  try {
    const cred = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
    return cred ? { data: toJson(cred), error: null } : cancelled(new Error('no credential'));
  } catch (err) {
    return cancelled(err);
  }
}

/**
 * Asks the browser for a passkey of this site (username-less when `allowCredentials` is empty); its JSON for `…/verify`.
 * @example const { data: credential } = await getCredential(options);
 */
export async function getCredential(options: Json): Promise<Result<Json>> {
  const g = api();
  if (!g) return fail('webauthn_unavailable', 'This environment has no WebAuthn (navigator.credentials); passkeys need a browser.');
  const publicKey =
    g.PublicKeyCredential.parseRequestOptionsFromJSON?.(options) ??
    ({
      ...options,
      challenge: b64urlToBytes(String(options.challenge)),
      allowCredentials: withIds(options.allowCredentials),
    } as unknown as PublicKeyCredentialRequestOptions);
  try {
    const cred = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
    return cred ? { data: toJson(cred), error: null } : cancelled(new Error('no credential'));
  } catch (err) {
    return cancelled(err);
  }
}
