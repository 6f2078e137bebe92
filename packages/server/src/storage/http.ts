/** The HTTP of downloads, without I/O: byte ranges, conditional requests, file names. */

export type RangeDecision = { kind: 'all' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Reads a `Range` header against an object of `size` bytes (RFC 9110 §14). One range of bytes
 * is served as 206; a header that is malformed, of another unit, or of several ranges is
 * ignored (200 with everything, as the RFC allows); a range starting past the end is 416.
 * @example parseRange('bytes=0-99', 1000) // { kind: 'part', start: 0, end: 99 }
 * @example parseRange('bytes=-100', 1000) // { kind: 'part', start: 900, end: 999 }
 */
export function parseRange(header: string | undefined, size: number): RangeDecision {
  if (!header) return { kind: 'all' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'all' };
  if (m[1] === '') {
    // The last N bytes.
    const n = Number(m[2]);
    if (n === 0) return { kind: 'unsatisfiable' };
    if (size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return { kind: 'unsatisfiable' };
  if (end < start) return { kind: 'all' };
  return { kind: 'part', start, end };
}

/**
 * Whether `If-None-Match` names this ETag (weak comparison, `*` matches any): then 304.
 * @example noneMatch('"abc", W/"def"', '"def"') // true
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/**
 * `Content-Disposition: attachment` for `?download=name`: an ASCII fallback and the UTF-8
 * name (RFC 6266 / 8187); quotes, backslashes and control characters never reach the header.
 * @example attachment('report.pdf') // 'attachment; filename="report.pdf"; filename*=UTF-8\'\'report.pdf'
 */
export function attachment(filename: string): string {
  const clean = filename.slice(0, 255).replace(/[\u0000-\u001f\u007f"\\/]|\p{Cs}/gu, '_') || 'download';
  const ascii = clean.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
