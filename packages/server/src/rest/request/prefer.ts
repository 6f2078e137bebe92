import type { Preferences } from './types.js';

const NONE: Preferences = { count: false, minimal: false };

/**
 * Reads the `Prefer` header (RFC 7240, PostgREST's vocabulary): `count=exact`,
 * `return=minimal` and `resolution=merge-duplicates|ignore-duplicates`. Unknown preferences are
 * ignored, as the RFC asks.
 * @example parsePrefer('return=minimal, count=exact') // { count: true, minimal: true }
 */
export function parsePrefer(header: string | string[] | undefined): Preferences {
  if (header === undefined || header === '') return NONE;
  const text = Array.isArray(header) ? header.join(',') : header;
  let count = false;
  let minimal = false;
  let resolution: Preferences['resolution'];
  for (const raw of text.split(/[,;]/)) {
    const token = raw.trim().toLowerCase();
    if (token === 'count=exact') count = true;
    else if (token === 'return=minimal') minimal = true;
    else if (token === 'return=representation') minimal = false;
    else if (token === 'resolution=merge-duplicates') resolution = 'merge';
    else if (token === 'resolution=ignore-duplicates') resolution = 'ignore';
  }
  if (resolution) return { count, minimal, resolution };
  return count || minimal ? { count, minimal } : NONE;
}
