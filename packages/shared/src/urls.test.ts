import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUrlAllowed, originMatches, parseOriginEntry, redirectEntryProblem } from './urls.js';

describe('isUrlAllowed (docs/api.md §4)', () => {
  const allow = ['https://app.example.com/auth', 'http://localhost:3000'];
  it.each([
    ['https://app.example.com/auth', true],
    ['https://app.example.com/auth/', true],
    ['https://app.example.com/auth/callback?x=1#frag', true],
    ['https://app.example.com/authx', false],
    ['https://app.example.com/', false],
    ['https://app.example.com.evil.com/auth', false],
    ['https://evil@app.example.com/auth', false],
    ['https://app.example.com:8443/auth', false],
    ['http://app.example.com/auth', false],
    ['javascript:alert(1)//https://app.example.com/auth', false],
    ['http://localhost:3000/anything', true],
    ['http://localhost:3001/', false],
    ['//app.example.com/auth', false],
    ['https://APP.example.com/auth', true],
  ])('%s → %s', (url, ok) => {
    expect(isUrlAllowed(url, allow)).toBe(ok);
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string(), { maxLength: 3 }), (u, list) => {
        expect(typeof isUrlAllowed(u, list)).toBe('boolean');
        expect(redirectEntryProblem(u) === null || typeof redirectEntryProblem(u) === 'string').toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('CORS origin entries', () => {
  it.each([
    ['https://app.example.com', true],
    ['http://localhost:*', true],
    ['http://127.0.0.1:*', true],
    ['http://[::1]:*', true],
    ['https://app.example.com:8443', true],
    ['https://*.example.com', false],
    ['https://app.example.com:*', false],
    ['https://app.example.com/path', false],
    ['ftp://app.example.com', false],
    ['app.example.com', false],
    ['https://user@app.example.com', false],
    ['*', false],
  ])('%s accepted: %s', (entry, ok) => {
    expect(!('problem' in parseOriginEntry(entry))).toBe(ok);
  });

  it('matches origins, with the loopback port wildcard', () => {
    const patterns = ['http://localhost:*', 'https://app.example.com'].map(parseOriginEntry).filter((p) => !('problem' in p));
    expect(originMatches('http://localhost:5173', patterns as never)).toBe(true);
    expect(originMatches('https://app.example.com', patterns as never)).toBe(true);
    expect(originMatches('https://app.example.com:443', patterns as never)).toBe(true);
    expect(originMatches('https://app.example.com.evil.com', patterns as never)).toBe(false);
    expect(originMatches('http://app.example.com', patterns as never)).toBe(false);
    expect(originMatches('null', patterns as never)).toBe(false);
  });
});
