import fc from 'fast-check';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/index.js';
import { multipartBoundary, readMultipartFile } from './multipart.js';

// The multipart reader of /storage/v1 uploads: any file bytes and fields, cut into any chunks,
// come out exactly; any body at all ends in the file or in a 400, never in another error.

const BOUNDARY = '----plinthBoundary7MA4YWxk';
const crlf = '\r\n';

function form(fields: Array<[string, string]>, file: Buffer, type?: string): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(Buffer.from(`--${BOUNDARY}${crlf}Content-Disposition: form-data; name="${name}"${crlf}${crlf}${value}${crlf}`));
  }
  const head = `--${BOUNDARY}${crlf}Content-Disposition: form-data; name=""; filename="blob"${crlf}${type ? `Content-Type: ${type}${crlf}` : ''}${crlf}`;
  parts.push(Buffer.from(head), file, Buffer.from(`${crlf}--${BOUNDARY}--${crlf}`));
  return Buffer.concat(parts);
}

/** `body` as a request stream, cut at `cuts` (offsets). */
function chunked(body: Buffer, cuts: number[]): Readable {
  const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const p of [...points, body.length]) {
    if (p > at) chunks.push(body.subarray(at, p));
    at = Math.max(at, p);
  }
  return Readable.from(chunks);
}

async function drain(r: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of r) out.push(c as Buffer);
  return Buffer.concat(out);
}

describe('multipart uploads', () => {
  it('reads the boundary of a multipart Content-Type, quoted or not, and nothing else', () => {
    expect(multipartBoundary(`multipart/form-data; boundary=${BOUNDARY}`)).toBe(BOUNDARY);
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('text/plain')).toBeNull();
    expect(multipartBoundary(undefined)).toBeNull();
    expect(() => multipartBoundary('multipart/form-data')).toThrow(ApiError);
  });

  it('gives the file bytes and the fields before it exactly, however the body is cut', async () => {
    // Bytes that look like the delimiter are the interesting ones.
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(13, 10, 45));
    await fc.assert(
      fc.asyncProperty(
        fc.array(byte, { maxLength: 3000 }),
        fc.array(fc.tuple(fc.constantFrom('cacheControl', 'metadata', 'x'), fc.string({ maxLength: 50 })), { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.option(fc.constantFrom('image/png', 'text/plain; charset=utf-8')),
        async (fileBytes, fields, cuts, type) => {
          const file = Buffer.from(fileBytes);
          const body = form(fields, file, type ?? undefined);
          const part = await readMultipartFile(chunked(body, cuts), BOUNDARY);
          expect(await drain(part.body)).toEqual(file);
          expect(part.contentType).toBe(type ?? 'application/octet-stream');
          expect(part.fields).toEqual(Object.fromEntries(fields));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('any body ends in the file or a 400 invalid_request, never another error', async () => {
    const valid = form([['cacheControl', '3600']], Buffer.from('hello'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
          fc.nat({ max: valid.length }).map((n) => valid.subarray(0, n)),
          fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([i, b]) => {
            const copy = Buffer.from(valid);
            copy[i] = b;
            return copy;
          }),
        ),
        fc.array(fc.nat(), { maxLength: 5 }),
        async (body, cuts) => {
          try {
            const part = await readMultipartFile(chunked(body, cuts), BOUNDARY);
            await drain(part.body);
          } catch (err) {
            expect(err).toBeInstanceOf(ApiError);
            expect((err as ApiError).status).toBe(400);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
