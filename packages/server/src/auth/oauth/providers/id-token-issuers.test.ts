import { describe, expect, it } from 'vitest';
import { github } from './github.js';
import { google } from './google.js';
import { microsoft } from './microsoft.js';

// Which issuers an ID token brought to /auth/v1/token?grant_type=id_token may name, per built-in
// provider (the token's signature and `iss` are then checked by jose against these).
describe('idTokenIssuers', () => {
  const TEMPLATE = 'https://login.microsoftonline.com/{tenantid}/v2.0';
  const TID = '9188040d-6c67-4c5b-b112-36a304b66dad';

  it('Microsoft: the template filled with the token’s own tenant, and nothing for a tenant that is no id', () => {
    expect(microsoft.idTokenIssuers?.(TEMPLATE, { tid: TID })).toEqual([`https://login.microsoftonline.com/${TID}/v2.0`]);
    // A `tid` that would turn the issuer into another URL, or none: no issuer, so the token is refused.
    expect(microsoft.idTokenIssuers?.(TEMPLATE, { tid: 'evil.example/x' })).toEqual([]);
    expect(microsoft.idTokenIssuers?.(TEMPLATE, {})).toEqual([]);
    // A local test provider's plain issuer stays as discovered.
    expect(microsoft.idTokenIssuers?.('http://127.0.0.1:4000', { tid: TID })).toEqual(['http://127.0.0.1:4000']);
  });

  it('Google: its issuer with and without the scheme; a local test provider’s as discovered', () => {
    expect(google.idTokenIssuers?.('https://accounts.google.com', {})).toEqual(['https://accounts.google.com', 'accounts.google.com']);
    expect(google.idTokenIssuers?.('http://127.0.0.1:4000', {})).toEqual(['http://127.0.0.1:4000']);
  });

  it('GitHub issues no ID tokens: it has no profile of one', () => {
    expect(github.idTokenProfile).toBeUndefined();
    expect(microsoft.idTokenProfile?.({ sub: 's', email: 'a@b.c' }).emailVerified).toBe(false); // nOAuth: not vouched for
  });
});
