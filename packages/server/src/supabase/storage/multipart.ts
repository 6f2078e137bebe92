/**
 * The one file of a `multipart/form-data` upload (storage-js sends a Blob or a FormData this
 * way), streamed: the text fields before the file (`cacheControl`, `metadata`) are read whole
 * (at most 64 KiB together), the file's bytes are handed on as a stream as they arrive, with the
 * request's backpressure, and whatever follows the file is read and discarded. No library: the
 * server has no multipart dependency, and one file part is all Supabase's upload has.
 */
import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { ApiError } from '../../http/index.js';

const MAX_HEAD = 16 * 1024;
const MAX_FIELDS = 64 * 1024;

export interface MultipartFile {
  /** The text fields that came before the file, by name. */
  fields: Record<string, string>;
  /** The file part's Content-Type (`application/octet-stream` when it has none). */
  contentType: string;
  /** The file's bytes, as they arrive. */
  body: Readable;
  /** Stops reading into `body` (an upload refused before its bytes): the rest of the request is discarded. */
  abandon(): void;
}

const bad = (message: string) => new ApiError('invalid_request', message);

/**
 * The boundary of a multipart Content-Type, or null when it is not multipart/form-data.
 * @example multipartBoundary('multipart/form-data; boundary=----x') // '----x'
 */
export function multipartBoundary(contentType: unknown): string | null {
  if (typeof contentType !== 'string' || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^";\s]{1,70}))/i.exec(contentType);
  if (!m) throw bad('A multipart/form-data body needs a boundary parameter in its Content-Type.');
  return m[1] ?? m[2];
}

/** A part's name, file name (null: a text field) and type, from its header block. */
function partHead(text: string): { name: string; filename: string | null; type: string } {
  let name = '';
  let filename: string | null = null;
  let type = 'application/octet-stream';
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') {
      name = /;\s*name="([^"]*)"/i.exec(value)?.[1] ?? /;\s*name=([^;\s]+)/i.exec(value)?.[1] ?? '';
      const f = /;\s*filename="([^"]*)"/i.exec(value) ?? /;\s*filename=([^;\s]+)/i.exec(value);
      if (f) filename = f[1];
    } else if (key === 'content-type' && value !== '') {
      type = value;
    }
  }
  return { name, filename, type };
}

/**
 * Reads a multipart body up to its first file part and resolves with that file as a stream.
 * 400 `invalid_request` for a malformed body or one without a file.
 * @example const part = await readMultipartFile(req.raw, boundary); await objects.upload(who, { body: part.body, contentType: part.contentType, … });
 */
export function readMultipartFile(source: Readable, boundary: string): Promise<MultipartFile> {
  const open = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields: Record<string, string> = {};
  let fieldBytes = 0;
  let buf: Buffer = Buffer.alloc(0);
  let state: 'preamble' | 'head' | 'field' | 'file' | 'done' = 'preamble';
  let field = '';
  let file: PassThrough | null = null;

  return new Promise<MultipartFile>((resolve, reject) => {
    const detach = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
      state = 'done';
      source.resume(); // what is left is read and dropped
    };
    const fail = (err: unknown) => {
      const f = file;
      detach();
      if (f) f.destroy(err instanceof Error ? err : new Error(String(err)));
      else reject(err);
    };
    const write = (bytes: Buffer) => {
      if (!file || bytes.length === 0) return;
      if (!file.write(bytes)) {
        source.pause();
        file.once('drain', () => state === 'file' && source.resume());
      }
    };
    /** The two bytes after a delimiter at `end`: '--' ends the body, CRLF starts a part; null: not here yet. */
    const after = (end: number): string | null => (buf.length < end + 2 ? null : buf.subarray(end, end + 2).toString('latin1'));

    function step(): void {
      for (;;) {
        if (state === 'preamble') {
          const i = buf.indexOf(open);
          if (i < 0) {
            if (buf.length > MAX_HEAD) throw bad('The multipart body does not start with its boundary.');
            return;
          }
          const next = after(i + open.length);
          if (next === null) return;
          if (next !== '\r\n') throw bad('The multipart body has no file.');
          buf = buf.subarray(i + open.length + 2);
          state = 'head';
        } else if (state === 'head') {
          const i = buf.indexOf('\r\n\r\n');
          if (i < 0) {
            if (buf.length > MAX_HEAD) throw bad('A part of the multipart body has headers over 16 KiB.');
            return;
          }
          const head = partHead(buf.subarray(0, i).toString('utf8'));
          buf = buf.subarray(i + 4);
          if (head.filename === null) {
            field = head.name;
            state = 'field';
            continue;
          }
          state = 'file';
          file = new PassThrough();
          // The body's failure (cut short, malformed) reaches the upload through the stream's
          // state (storage's upload watches it with finished()); it may come before the upload
          // reads, and must not be an uncaught 'error' event then.
          file.on('error', () => undefined);
          resolve({ fields, contentType: head.type, body: file, abandon: () => state !== 'done' && fail(bad('abandoned')) });
        } else if (state === 'field') {
          const i = buf.indexOf(delimiter);
          if (fieldBytes + (i < 0 ? buf.length : i) > MAX_FIELDS) throw bad('The text fields of the multipart body are over 64 KiB.');
          if (i < 0) return;
          const next = after(i + delimiter.length);
          if (next === null) return;
          fields[field] = buf.subarray(0, i).toString('utf8');
          fieldBytes += i;
          if (next !== '\r\n') throw bad('The multipart body has no file.');
          buf = buf.subarray(i + delimiter.length + 2);
          state = 'head';
        } else if (state === 'file') {
          const i = buf.indexOf(delimiter);
          if (i < 0) {
            // The end of this chunk may be the start of the delimiter: kept for the next one.
            const keep = Math.min(buf.length, delimiter.length - 1);
            write(buf.subarray(0, buf.length - keep));
            buf = buf.subarray(buf.length - keep);
            return;
          }
          write(buf.subarray(0, i));
          const f = file;
          detach();
          f?.end();
          return;
        } else {
          return;
        }
      }
    }

    function onData(chunk: Buffer) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      try {
        step();
      } catch (err) {
        fail(err);
      }
    }
    function onEnd() {
      if (state !== 'done') fail(bad(state === 'file' ? 'The multipart body ended inside its file.' : 'The multipart body has no file.'));
    }
    function onError(err: Error) {
      if (state !== 'done') fail(new ApiError('invalid_request', 'The upload was interrupted before its end.', undefined, { cause: err }));
    }
    function onClose() {
      if (state !== 'done') fail(new ApiError('invalid_request', 'The upload was interrupted before its end.'));
    }
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
  });
}
