import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64u = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');

/** Options as JSON (base64url strings) or as auth-js hands them to the browser (ArrayBuffers). */
type Bytes = string | ArrayBuffer | ArrayBufferView;
const text = (v: Bytes): string =>
  typeof v === 'string' ? v : b64u(ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v));

/**
 * An authenticator in the test process: a P-256 key, `none` attestation, the JSON a browser's
 * `credential.toJSON()` gives (what auth-js and the SDK send). Chromium's CDP virtual
 * authenticator (packages/sdk/test/e2e/passkeys-browser.test.ts) covers the browser; this one
 * lets server tests make credentials for any origin and RP ID, hostile ones included, in-process.
 * @example const key = new TestAuthenticator({ rpId: 'localhost', origin: 'http://localhost:8080' }); const credential = key.create(options);
 */
export class TestAuthenticator {
  readonly rpId: string;
  /** The page's origin the browser puts in clientDataJSON (a phishing page's, to test refusals). */
  origin: string;
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly cose: Uint8Array;
  private userHandle: string | undefined;
  private counter = 0;
  /** Sets the user-verified flag (a PIN or fingerprint). */
  userVerified = true;

  constructor(opts: { rpId: string; origin: string }) {
    this.rpId = opts.rpId;
    this.origin = opts.origin;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x as string, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y as string, 'base64url'))],
      ]),
    );
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private flags(extra: number): Buffer {
    return Buffer.from([0x01 | (this.userVerified ? 0x04 : 0) | extra]);
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  private rpHash(): Buffer {
    return createHash('sha256').update(this.rpId).digest();
  }

  /** navigator.credentials.create() for WebAuthn creation options (their JSON form). */
  create(options: { challenge: Bytes; user?: { id: Bytes } }) {
    this.userHandle = options.user ? text(options.user.id) : undefined;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.rpHash(),
      this.flags(0x40),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(this.cose),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        attestationObject: b64u(attestationObject),
        clientDataJSON: b64u(this.clientData('webauthn.create', text(options.challenge))),
        transports: ['internal' as const],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /** navigator.credentials.get() for WebAuthn request options (their JSON form); the counter grows each time. */
  get(options: { challenge: Bytes }) {
    this.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authenticatorData = Buffer.concat([this.rpHash(), this.flags(0), counter]);
    const clientData = this.clientData('webauthn.get', text(options.challenge));
    const signature = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientData).digest()]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        authenticatorData: b64u(authenticatorData),
        clientDataJSON: b64u(clientData),
        signature: b64u(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
