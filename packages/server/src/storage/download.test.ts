import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachment, noneMatch, parseRange } from './download.js';

// The download headers' parsers, over any input a client can send.

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', 1000, { kind: 'part', start: 0, end: 99 }],
    ['bytes=900-', 1000, { kind: 'part', start: 900, end: 999 }],
    ['bytes=-100', 1000, { kind: 'part', start: 900, end: 999 }],
    ['bytes=-5000', 1000, { kind: 'part', start: 0, end: 999 }],
    ['bytes=0-5000', 1000, { kind: 'part', start: 0, end: 999 }],
    ['bytes=1000-', 1000, { kind: 'unsatisfiable' }],
    ['bytes=-0', 1000, { kind: 'unsatisfiable' }],
    ['bytes=0-0,5-9', 1000, { kind: 'all' }],
    ['items=0-9', 1000, { kind: 'all' }],
    ['bytes=9-1', 1000, { kind: 'all' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
  ])('%s of %i bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it('any header and size: everything, nothing, or a range inside the object', () => {
    const header = fc.oneof(
      fc.string(),
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `bytes=${a}-${b}`),
      fc.nat().map((n) => `bytes=-${n}`),
    );
    fc.assert(
      fc.property(header, fc.nat({ max: 1e12 }), (h, size) => {
        const r = parseRange(h, size);
        if (r.kind === 'part') {
          expect(Number.isSafeInteger(r.start) && Number.isSafeInteger(r.end)).toBe(true);
          expect(0 <= r.start && r.start <= r.end && r.end < size).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
  });
});

describe('noneMatch and attachment', () => {
  it('If-None-Match lists compare weakly; * matches', () => {
    expect(noneMatch('"a", W/"b"', '"b"')).toBe(true);
    expect(noneMatch('*', '"x"')).toBe(true);
    expect(noneMatch('"a"', '"b"')).toBe(false);
    expect(noneMatch(undefined, '"b"')).toBe(false);
  });

  it('any file name gives a header value without quotes, controls or line breaks that could split it', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc.constantFrom('\ud800x', 'a\r\nSet-Cookie: x=1', '"\\', `${'x'.repeat(254)}😀`),
        ),
        (name) => {
          const value = attachment(name);
          expect(value).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%!._~-]*$/);
          expect(value.match(/filename="([^"]*)"/)?.[1]).not.toMatch(/["\\]/);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
