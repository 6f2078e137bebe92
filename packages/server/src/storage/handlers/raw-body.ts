import { ApiError, type App } from '../../http/index.js';

/** How long a refused upload's remaining body is read and discarded before the connection closes. */
const LINGER_MS = 5000;

/**
 * Makes a Fastify scope take any request body as the raw stream (uploads): its only
 * content-type parser hands the stream through untouched, so the bytes stream to the backend
 * and the rest of the API keeps its JSON parser and body limit.
 * @example await app.register(async (raw) => { acceptRawBodies(raw); raw.route({ … handler: objects.upload }); });
 */
export function acceptRawBodies(raw: App): void {
  raw.removeAllContentTypeParsers();
  raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  // Fastify refuses a malformed Content-Type before any parser: for an upload that is the file's type.
  raw.setErrorHandler((err) => {
    if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      throw new ApiError('invalid_mime_type', 'The Content-Type is not a valid media type such as image/png.');
    }
    throw err;
  });
  // A refused upload is answered before its body is read. The client may still be sending:
  // as nginx's lingering close does, what it sends for a few more seconds is read and
  // discarded (never stored), so it can read the answer instead of meeting a reset; then the
  // connection is closed. A client that finishes in time keeps its connection.
  raw.addHook('onResponse', async (req) => {
    if (req.raw.complete) return;
    const timer = setTimeout(() => req.raw.destroy(), LINGER_MS);
    timer.unref();
    req.raw.once('end', () => clearTimeout(timer));
    req.raw.once('close', () => clearTimeout(timer));
    req.raw.resume();
  });
}
