import { issuerProblem, isUrlAllowed, MASK, oidcProviderIdProblem, redirectEntryProblem } from '@plinth/shared';
import type { AuthSettings, OidcProvider } from '../../lib/api';

/** The auth page's draft and its problems by field, and the checks the console makes before saving. */
export type Draft = AuthSettings;
export type Problems = Record<string, string>;
export const FLOW_URLS = [
  ['email_verification_url', 'Email verification page'],
  ['password_reset_url', 'Password reset page'],
  ['magic_link_url', 'Magic link page'],
] as const;

export const lines = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** Problems of a list field (`cors_origins[1]` → "line 2: …"), for the textarea that holds it. */
export const listErrors = (problems: Problems, field: string) =>
  Object.entries(problems)
    .filter(([k]) => k === field || k.startsWith(`${field}[`))
    .map(([k, m]) => {
      const i = /\[(\d+)\]$/.exec(k);
      return i ? `Line ${Number(i[1]) + 1}: ${m}` : m;
    });

/**
 * The save-time refusals of an OpenID Connect provider (docs/oidc.md §2), in words: the server's
 * `details[].code`, shown before its own message at the field.
 */
export const OIDC_CODE_WORDS: Record<string, string> = {
  oidc_unreachable: 'Unreachable: Plinth could not read the provider’s discovery document or keys',
  oidc_issuer_mismatch: 'Issuer mismatch: the provider names itself by another issuer; copy its exact issuer (trailing / included)',
  oidc_unsupported: 'Unsupported: the provider lacks something sign-in needs',
};

/**
 * The problems of a refused save by field: the server's message, after the words for its code.
 * @example problemsOf([{ field: 'oidc_providers[0].issuer', code: 'oidc_unreachable', message: 'x could not be reached' }])
 * // { 'oidc_providers[0].issuer': 'Unreachable: … (oidc_unreachable). x could not be reached' }
 */
export function problemsOf(details: ReadonlyArray<{ field: string; message: string; code?: string }>): Problems {
  return Object.fromEntries(
    details.map((p) => {
      const words = p.code ? OIDC_CODE_WORDS[p.code] : undefined;
      return [p.field, words ? `${words} (${p.code}). ${p.message}` : p.message];
    }),
  );
}

const OIDC_FIELD_LABELS: Record<string, string> = {
  id: 'ID',
  name: 'Name',
  issuer: 'Issuer URL',
  client_id: 'Client ID',
  client_secret: 'Client secret',
  scopes: 'Scopes',
  token_endpoint_auth_method: 'Token endpoint authentication',
  enabled: 'Enabled',
};

/**
 * How the list of a refused save names a field: an OpenID Connect provider's by the provider and
 * the field's label (the server's `oidc_providers[0].issuer` means nothing on the page), others
 * as the server names them.
 * @example fieldLabel('oidc_providers[0].issuer', draft) // 'OpenID Connect “Keycloak”: Issuer URL'
 */
export function fieldLabel(field: string, d: Draft): string {
  const m = /^oidc_providers\[(\d+)\](?:\.(\w+))?$/.exec(field);
  if (!m) return field;
  const p = d.oidc_providers[Number(m[1])];
  const who = p ? p.name.trim() || p.id || 'the new provider' : `provider ${Number(m[1]) + 1}`;
  return `OpenID Connect “${who}”${m[2] ? `: ${OIDC_FIELD_LABELS[m[2]] ?? m[2]}` : ''}`;
}

/** The scopes asked for when none are typed (the server's default, docs/api.md). */
export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

/** A new provider's entry: nothing typed yet, disabled until the admin turns it on. */
export const newOidcProvider = (): OidcProvider => ({
  id: '',
  name: '',
  issuer: '',
  client_id: '',
  client_secret: '',
  scopes: [...DEFAULT_SCOPES],
  token_endpoint_auth_method: 'client_secret_basic',
  enabled: false,
});

/**
 * Whether a masked secret is still the stored one: the server keeps it only for a provider saved
 * with the same id and issuer (docs/oidc.md §2), else it must be typed again.
 */
export const keepsSecret = (p: OidcProvider, saved: readonly OidcProvider[]) =>
  p.client_secret === MASK && saved.some((s) => s.id === p.id && s.issuer === p.issuer);

/** The server's checks of each `oidc_providers` entry that need no provider (docs/api.md), by field. */
function oidcProblems(list: readonly OidcProvider[], saved: readonly OidcProvider[], out: Problems): void {
  const seen = new Set<string>();
  list.forEach((p, i) => {
    const at = (f: string) => `oidc_providers[${i}].${f}`;
    const id = oidcProviderIdProblem(p.id);
    if (id) out[at('id')] = id;
    else if (seen.has(p.id)) out[at('id')] = 'is the id of another provider in the list';
    seen.add(p.id);
    if (!p.name.trim() || p.name.length > 64) out[at('name')] = 'must be a name of 1 to 64 characters (the sign-in button shows it)';
    const issuer = issuerProblem(p.issuer);
    if (issuer) out[at('issuer')] = issuer;
    if (!p.client_id.trim()) out[at('client_id')] = 'must be the client id the provider gave';
    if (!p.client_secret) out[at('client_secret')] = 'must be the client secret the provider gave';
    else if (p.client_secret === MASK && !keepsSecret(p, saved))
      out[at('client_secret')] = 'must be typed again: the stored secret is kept only for the same id and issuer';
    if (!p.scopes.includes('openid')) out[at('scopes')] = 'must include openid';
    else if (p.scopes.length > 20) out[at('scopes')] = 'must be at most 20 scopes';
    else if (new Set(p.scopes).size !== p.scopes.length) out[at('scopes')] = 'must not repeat a scope';
  });
}

/** What the console refuses before asking the server (the spec: "the console blocks the save"). */
/** The keys plinth.json manages (`min_password_length`, `providers.github`) and its path, from GET's extra fields. */
export function managedOf(saved: Draft): { keys: string[]; file: string | null } {
  const extra = saved as Draft & { managed?: string[]; managed_by?: string };
  return { keys: extra.managed ?? [], file: extra.managed_by ?? null };
}

/** A value at a managed key (`providers.github` is a provider), as JSON for comparison. */
function at(d: Draft, key: string): string {
  const [top, sub] = key.split('.');
  const v = (d as unknown as Record<string, unknown>)[top];
  return JSON.stringify(sub === undefined ? v : (v as Record<string, unknown> | undefined)?.[sub]);
}

/**
 * A key the project file manages and the draft changed: refused here, as the server would
 * (409 managed_by_config), at its field.
 */
export function managedProblems(d: Draft, saved: Draft): Problems {
  const { keys, file } = managedOf(saved);
  const out: Problems = {};
  for (const k of keys) if (at(d, k) !== at(saved, k)) out[k] = `is kept in ${file ?? 'the project file'}: change it there`;
  return out;
}

export function localProblems(d: Draft, saved: Draft): Problems {
  const out: Problems = {};
  d.allowed_redirect_urls.forEach((u, i) => {
    const p = redirectEntryProblem(u);
    if (p) out[`allowed_redirect_urls[${i}]`] = p;
  });
  for (const [field] of FLOW_URLS) {
    const v = d[field];
    if (v && !isUrlAllowed(v, d.allowed_redirect_urls))
      out[field] = 'is not allowed by the redirect URLs above: add it (or its site) there first';
  }
  if (d.require_email_confirmation && !d.email_verification_url) out.email_verification_url = 'is required while email confirmation is on';
  oidcProblems(d.oidc_providers, saved.oidc_providers, out);
  return { ...out, ...managedProblems(d, saved) };
}
