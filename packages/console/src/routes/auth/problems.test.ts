import { defaultAuthSettings } from '../../../../server/src/settings/defaults.js';
import { describe, expect, it } from 'vitest';
import type { OidcProvider } from '../../lib/api';
import { type Draft, fieldLabel, localProblems, newOidcProvider, problemsOf } from './problems';

// The auth page's own checks of OpenID Connect providers (the server's rules, docs/api.md,
// refused before a request) and how the server's refusals are worded at their fields.

const saved: OidcProvider = {
  id: 'corp',
  name: 'Corp SSO',
  issuer: 'https://sso.example.com/realms/acme',
  client_id: 'plinth',
  client_secret: '********',
  scopes: ['openid', 'email', 'profile'],
  token_endpoint_auth_method: 'client_secret_basic',
  enabled: true,
};
const base = defaultAuthSettings() as unknown as Draft;
const draft = (...oidc_providers: OidcProvider[]): Draft => ({ ...base, oidc_providers });
const before = draft(saved);

describe('OpenID Connect providers: the console’s own checks', () => {
  it('passes a saved provider sent back with its masked secret', () => {
    expect(localProblems(draft(saved), before)).toEqual({});
  });

  it('names each field a new, empty provider lacks', () => {
    expect(localProblems(draft(saved, newOidcProvider()), before)).toEqual({
      'oidc_providers[1].id': 'must be 2 to 32 lowercase letters, digits or -',
      'oidc_providers[1].name': 'must be a name of 1 to 64 characters (the sign-in button shows it)',
      'oidc_providers[1].issuer': 'must be the issuer URL (https://…)',
      'oidc_providers[1].client_id': 'must be the client id the provider gave',
      'oidc_providers[1].client_secret': 'must be the client secret the provider gave',
    });
  });

  it('refuses a reserved or repeated id, plain http elsewhere than loopback, scopes without openid or repeated', () => {
    const problems = localProblems(
      draft(
        { ...saved, id: 'github' },
        { ...saved, client_secret: 's', issuer: 'http://sso.example.com', scopes: ['email'] },
        { ...saved, client_secret: 's', scopes: ['openid', 'openid'] },
      ),
      before,
    );
    expect(problems['oidc_providers[0].id']).toMatch(/^is reserved/);
    expect(problems['oidc_providers[2].id']).toBe('is the id of another provider in the list');
    expect(problems['oidc_providers[1].issuer']).toBe('must be https (plain http only on localhost, 127.0.0.1 or [::1])');
    expect(problems['oidc_providers[1].scopes']).toBe('must include openid');
    expect(problems['oidc_providers[2].scopes']).toBe('must not repeat a scope');
    expect(localProblems(draft({ ...saved, issuer: 'http://127.0.0.1:9000', client_secret: 's' }), before)).toEqual({});
  });

  it('asks for the secret again when the id or the issuer changed (the server keeps it only for both)', () => {
    const want = { 'oidc_providers[0].client_secret': 'must be typed again: the stored secret is kept only for the same id and issuer' };
    expect(localProblems(draft({ ...saved, issuer: 'https://other.example.com' }), before)).toEqual(want);
    expect(localProblems(draft({ ...saved, id: 'corp2' }), before)).toEqual(want);
    expect(localProblems(draft({ ...saved, issuer: 'https://other.example.com', client_secret: 'new' }), before)).toEqual({});
  });
});

describe('the server’s refusals, in words', () => {
  it('puts the meaning of an oidc_* code before the server’s message; other problems as they come', () => {
    expect(
      problemsOf([
        { field: 'oidc_providers[0].issuer', code: 'oidc_issuer_mismatch', message: 'the discovery document names "x"' },
        { field: 'cors_origins[0]', message: 'must be an origin' },
      ]),
    ).toEqual({
      'oidc_providers[0].issuer':
        'Issuer mismatch: the provider names itself by another issuer; copy its exact issuer (trailing / included) (oidc_issuer_mismatch). the discovery document names "x"',
      'cors_origins[0]': 'must be an origin',
    });
  });

  it('names a provider’s field by the provider and the field’s label', () => {
    const d = draft(saved, newOidcProvider());
    expect(fieldLabel('oidc_providers[0].token_endpoint_auth_method', d)).toBe('OpenID Connect “Corp SSO”: Token endpoint authentication');
    expect(fieldLabel('oidc_providers[1].id', d)).toBe('OpenID Connect “the new provider”: ID');
    expect(fieldLabel('oidc_providers[1]', d)).toBe('OpenID Connect “the new provider”');
    expect(fieldLabel('cors_origins[0]', d)).toBe('cors_origins[0]');
  });
});
