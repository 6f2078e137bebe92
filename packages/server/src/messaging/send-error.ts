/**
 * A failed send by any transport (SMTP, an SMS provider): `response` is the provider's answer
 * for the delivery log (at most 500 characters, credentials masked); `retryable` says whether
 * the outbox should try again later (a refused address: no).
 * @example throw new SendError('46elks: HTTP 403', 'HTTP 403: Invalid to number', false);
 */
export class SendError extends Error {
  constructor(
    message: string,
    readonly response: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'SendError';
  }
}
