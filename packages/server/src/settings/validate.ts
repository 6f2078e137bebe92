import {
  CLIENT_SECRET_PROVIDERS,
  issuerProblem,
  isUrlAllowed,
  OAUTH_PROVIDERS,
  oidcProviderIdProblem,
  parseOriginEntry,
  redirectEntryProblem,
  TEMPLATE_KINDS,
} from '@plinth/shared';
import { MASK, OIDC_DEFAULTS, SECRET_FIELDS } from './defaults.js';
import type { AuthSettings, EmailTemplateKind, FieldProblem, OidcProviderSettings } from './types.js';

export type { FieldProblem } from './types.js';

const BOOLEANS = [
  'email_password_enabled',
  'magic_link_enabled',
  'phone_enabled',
  'require_email_confirmation',
  'cors_allow_localhost',
  'mfa_totp_enabled',
  'passkey_enabled',
  'anonymous_sign_in_enabled',
] as const;
const FLOW_URLS = ['email_verification_url', 'password_reset_url', 'magic_link_url'] as const;
const APPLE_FIELDS = ['service_id', 'team_id', 'key_id', 'private_key'] as const;
const TOP_LEVEL = new Set<string>([
  ...BOOLEANS,
  ...FLOW_URLS,
  'min_password_length',
  'session_duration_seconds',
  'allowed_redirect_urls',
  'cors_origins',
  'providers',
  'oidc_providers',
  'email_templates',
  'mfa_enforcement',
  'passkey_rp_id',
  'passkey_origins',
  'hooks',
]);
const HOOKS = ['custom_access_token', 'before_user_created', 'send_email', 'send_sms'] as const;
/** The send hooks may also be an http(s) URL, signed with their secrets (auth/hooks.ts). */
const SEND_HOOK_URL = /^https?:\/\/[^\s]{1,2040}$/;
const HOOK_SECRETS = /^v1,whsec_[A-Za-z0-9+/=]{16,512}(?:\|v1,whsec_[A-Za-z0-9+/=]{16,512}){0,4}$/;
/** What auth/hooks.ts's hookTarget reads: a SQL function of the project's own schemas, or a project function. */
const HOOK_URI =
  /^(?:pg-functions:\/\/postgres\/(?!(?:auth|plinth|pg_catalog|information_schema|realtime|storage)\/)[A-Za-z_][A-Za-z0-9_]{0,62}\/[A-Za-z_][A-Za-z0-9_]{0,62}|function:[A-Za-z0-9][A-Za-z0-9_-]{0,63})$/;
const OIDC_FIELDS = new Set(['id', 'name', 'issuer', 'client_id', 'client_secret', 'scopes', 'token_endpoint_auth_method', 'enabled']);
const OIDC_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];
/** RFC 6749 §3.3 scope-token characters. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
const MAX_OIDC_PROVIDERS = 20;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Merges a PATCH body into the current settings: top-level fields replace, `providers` and
 * `email_templates` merge per entry, a masked secret keeps the stored one. Shape problems
 * (unknown fields, non-objects) are reported, not thrown.
 * @example mergeAuthPatch(current, { providers: { github: { enabled: true } } })
 */
export function mergeAuthPatch(current: AuthSettings, patch: unknown): { merged: AuthSettings; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const merged: AuthSettings = structuredClone(current);
  if (!isObject(patch)) return { merged, problems: [{ field: '', message: 'the body must be a JSON object of settings' }] };
  const target = merged as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (!TOP_LEVEL.has(key)) {
      problems.push({ field: key, message: 'is not a setting' });
    } else if (key === 'providers') {
      if (!isObject(value)) {
        problems.push({ field: 'providers', message: 'must be an object keyed by provider' });
        continue;
      }
      for (const [name, p] of Object.entries(value)) {
        // Own properties only: `toString`, `__proto__` or `constructor` must never reach an
        // inherited object (a write there would change every object of the process).
        const providers = merged.providers as unknown as Record<string, Record<string, unknown>>;
        const stored = Object.hasOwn(providers, name) ? providers[name] : undefined;
        if (!stored)
          problems.push({
            field: `providers.${name}`,
            message: `is not a supported provider (${OAUTH_PROVIDERS.join(', ')})`,
          });
        else if (!isObject(p)) problems.push({ field: `providers.${name}`, message: 'must be an object' });
        else
          for (const [f, v] of Object.entries(p)) {
            if (!Object.hasOwn(stored, f)) problems.push({ field: `providers.${name}.${f}`, message: 'is not a field of this provider' });
            else if (!(SECRET_FIELDS.has(f) && v === MASK)) stored[f] = v;
          }
      }
    } else if (key === 'hooks') {
      if (!isObject(value)) {
        problems.push({ field: 'hooks', message: 'must be an object keyed by hook (custom_access_token, before_user_created)' });
        continue;
      }
      for (const [name, uri] of Object.entries(value)) {
        if (name === 'send_email_secrets' || name === 'send_sms_secrets') {
          if (uri === MASK) continue; // the masked value read back keeps the stored one
          if (uri !== null && (typeof uri !== 'string' || !HOOK_SECRETS.test(uri)))
            problems.push({ field: `hooks.${name}`, message: 'must be v1,whsec_<base64> (several joined by |), or null' });
          else merged.hooks = { ...merged.hooks, [name]: uri };
          continue;
        }
        if ((name === 'send_email' || name === 'send_sms') && typeof uri === 'string' && SEND_HOOK_URL.test(uri) && URL.canParse(uri)) {
          merged.hooks = { ...merged.hooks, [name]: uri };
          continue;
        }
        if (!(HOOKS as readonly string[]).includes(name))
          problems.push({ field: `hooks.${name}`, message: `is not a hook (${HOOKS.join(', ')})` });
        else if (uri !== null && (typeof uri !== 'string' || !HOOK_URI.test(uri)))
          problems.push({
            field: `hooks.${name}`,
            message: 'must be pg-functions://postgres/<schema>/<function> (a schema of the project), function:<name>, or null',
          });
        else merged.hooks = { ...merged.hooks, [name]: uri };
      }
    } else if (key === 'oidc_providers') {
      if (!Array.isArray(value)) problems.push({ field: 'oidc_providers', message: 'must be an array of providers' });
      else merged.oidc_providers = value.map((p) => mergeOidcEntry(current.oidc_providers, p));
    } else if (key === 'email_templates') {
      if (!isObject(value)) {
        problems.push({ field: 'email_templates', message: 'must be an object keyed by template kind' });
        continue;
      }
      for (const [kind, tpl] of Object.entries(value)) {
        if (!(TEMPLATE_KINDS as readonly string[]).includes(kind))
          problems.push({ field: `email_templates.${kind}`, message: `is not a template kind (${TEMPLATE_KINDS.join(', ')})` });
        else if (tpl === null) delete merged.email_templates[kind as EmailTemplateKind];
        else if (!isObject(tpl))
          problems.push({ field: `email_templates.${kind}`, message: 'must be an object with subject, html, text, or null to reset' });
        else
          merged.email_templates[kind as EmailTemplateKind] = Object.assign(
            Object.create(null),
            merged.email_templates[kind as EmailTemplateKind],
            tpl,
          );
      }
    } else target[key] = value;
  }
  return { merged, problems };
}

/**
 * One entry of an `oidc_providers` PATCH (the list replaces the stored one): defaults for what it
 * leaves out, and a masked secret given back keeps the one stored for the same `id` and issuer.
 * Another issuer needs the secret typed again: else anyone allowed to change settings, who may
 * not read secrets (docs/security.md), could point the provider at a server of theirs and
 * receive the stored secret with its next sign-in.
 */
function mergeOidcEntry(stored: readonly OidcProviderSettings[], entry: unknown): OidcProviderSettings {
  if (!isObject(entry)) return entry as OidcProviderSettings; // reported by validateOidcProviders
  // Without a prototype: a `__proto__` key is an own field (reported as unknown), never a prototype.
  const out: Record<string, unknown> = Object.assign(Object.create(null), {
    scopes: [...OIDC_DEFAULTS.scopes],
    token_endpoint_auth_method: OIDC_DEFAULTS.token_endpoint_auth_method,
  });
  for (const [k, v] of Object.entries(entry)) out[k] = v;
  if (out.client_secret === MASK) {
    const same = stored.find((p) => p.id === out.id && p.issuer === out.issuer);
    if (same) out.client_secret = same.client_secret;
  }
  return out as unknown as OidcProviderSettings;
}

function validateOidcProviders(problems: FieldProblem[], list: unknown): void {
  if (!Array.isArray(list)) {
    problems.push({ field: 'oidc_providers', message: 'must be an array of providers' });
    return;
  }
  if (list.length > MAX_OIDC_PROVIDERS) problems.push({ field: 'oidc_providers', message: `at most ${MAX_OIDC_PROVIDERS} providers` });
  const ids = new Set<string>();
  list.forEach((p: unknown, i) => {
    const at = (f: string) => `oidc_providers[${i}].${f}`;
    if (!isObject(p)) {
      problems.push({ field: `oidc_providers[${i}]`, message: 'must be an object {id, name, issuer, client_id, client_secret, enabled}' });
      return;
    }
    for (const k of Object.keys(p))
      if (!OIDC_FIELDS.has(k)) problems.push({ field: at(k), message: 'is not a field of an OpenID Connect provider' });
    const idProblem = oidcProviderIdProblem(p.id);
    if (idProblem) problems.push({ field: at('id'), message: idProblem });
    else if (ids.has(p.id as string)) problems.push({ field: at('id'), message: 'is the id of another provider in the list' });
    else ids.add(p.id as string);
    if (typeof p.name !== 'string' || !p.name.trim() || p.name.length > 64)
      problems.push({ field: at('name'), message: 'must be a name of 1 to 64 characters (the sign-in button shows it)' });
    const issuer = issuerProblem(p.issuer);
    if (issuer) problems.push({ field: at('issuer'), message: issuer });
    if (typeof p.client_id !== 'string' || !p.client_id.trim() || p.client_id.length > 512)
      problems.push({ field: at('client_id'), message: 'must be the client id the provider gave (1 to 512 characters)' });
    if (p.client_secret === MASK)
      problems.push({
        field: at('client_secret'),
        message: 'is required: the masked value keeps the stored secret only for a provider saved with this id and issuer',
      });
    else if (typeof p.client_secret !== 'string' || !p.client_secret || p.client_secret.length > 4096)
      problems.push({ field: at('client_secret'), message: 'must be the client secret the provider gave (1 to 4096 characters)' });
    const scopes = p.scopes;
    if (!Array.isArray(scopes) || scopes.length === 0 || scopes.length > 20 || !scopes.every((x) => typeof x === 'string' && SCOPE.test(x)))
      problems.push({ field: at('scopes'), message: 'must be 1 to 20 scope names (letters, digits and punctuation, no spaces)' });
    else if (!scopes.includes('openid')) problems.push({ field: at('scopes'), message: 'must include openid' });
    else if (new Set(scopes).size !== scopes.length) problems.push({ field: at('scopes'), message: 'must not repeat a scope' });
    if (!OIDC_AUTH_METHODS.includes(p.token_endpoint_auth_method as string))
      problems.push({ field: at('token_endpoint_auth_method'), message: `must be one of ${OIDC_AUTH_METHODS.join(', ')}` });
    if (typeof p.enabled !== 'boolean') problems.push({ field: at('enabled'), message: 'must be true or false' });
  });
}

/** A host name as WebAuthn's RP ID: lowercase labels, no scheme, port or path. */
const RP_ID = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function validatePasskeys(problems: FieldProblem[], s: AuthSettings): void {
  if (s.mfa_enforcement !== 'server' && s.mfa_enforcement !== 'policies')
    problems.push({ field: 'mfa_enforcement', message: 'must be "server" or "policies"' });
  if (s.passkey_rp_id !== null && (typeof s.passkey_rp_id !== 'string' || !RP_ID.test(s.passkey_rp_id)))
    problems.push({ field: 'passkey_rp_id', message: 'must be a host name (example.com) or null for the host of PUBLIC_URL' });
  if (!Array.isArray(s.passkey_origins)) {
    problems.push({ field: 'passkey_origins', message: 'must be an array of origins' });
    return;
  }
  if (s.passkey_origins.length > 20) problems.push({ field: 'passkey_origins', message: 'at most 20 entries' });
  s.passkey_origins.forEach((o, i) => {
    const problem = passkeyOriginProblem(o);
    if (problem) problems.push({ field: `passkey_origins[${i}]`, message: problem });
  });
}

/** An origin as the browser reports it in WebAuthn's clientDataJSON: scheme, host, port; https unless localhost. */
function passkeyOriginProblem(o: unknown): string | null {
  if (typeof o !== 'string') return 'must be a string';
  let u: URL;
  try {
    u = new URL(o);
  } catch {
    return 'must be an origin such as https://app.example.com';
  }
  if (u.origin !== o) return 'must be an origin alone (scheme, host, port; no path or trailing slash)';
  const local = u.hostname === 'localhost' || u.hostname === '127.0.0.1' || u.hostname === '[::1]';
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) return 'must be https (http only on localhost)';
  return null;
}

function int(problems: FieldProblem[], field: string, v: unknown, min: number, max: number) {
  if (typeof v !== 'number' || !Number.isInteger(v)) problems.push({ field, message: `must be an integer from ${min} to ${max}` });
  else if (v < min || v > max) problems.push({ field, message: `must be from ${min} to ${max}` });
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v.trim().length > 0;
}

/**
 * Every rule of docs/api.md §4 on a whole settings object; an empty list means valid.
 * @example validateAuthSettings({ ...defaults, min_password_length: 7 }) // [{ field: 'min_password_length', … }]
 */
export function validateAuthSettings(s: AuthSettings): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const b of BOOLEANS) if (typeof s[b] !== 'boolean') problems.push({ field: b, message: 'must be true or false' });
  int(problems, 'min_password_length', s.min_password_length, 8, 128);
  int(problems, 'session_duration_seconds', s.session_duration_seconds, 3600, 2_592_000);

  const allow = Array.isArray(s.allowed_redirect_urls) ? s.allowed_redirect_urls : [];
  if (!Array.isArray(s.allowed_redirect_urls)) problems.push({ field: 'allowed_redirect_urls', message: 'must be an array of URLs' });
  else if (allow.length > 100) problems.push({ field: 'allowed_redirect_urls', message: 'at most 100 entries' });
  allow.forEach((u, i) => {
    const p = typeof u === 'string' ? redirectEntryProblem(u) : 'must be a string';
    if (p) problems.push({ field: `allowed_redirect_urls[${i}]`, message: p });
  });

  if (!Array.isArray(s.cors_origins)) problems.push({ field: 'cors_origins', message: 'must be an array of origins' });
  else {
    if (s.cors_origins.length > 100) problems.push({ field: 'cors_origins', message: 'at most 100 entries' });
    s.cors_origins.forEach((o, i) => {
      const r = parseOriginEntry(o);
      if ('problem' in r) problems.push({ field: `cors_origins[${i}]`, message: r.problem });
    });
  }

  const validAllow = allow.filter((u) => typeof u === 'string' && redirectEntryProblem(u) === null);
  for (const f of FLOW_URLS) {
    const v = s[f];
    if (v === null) continue;
    if (typeof v !== 'string') problems.push({ field: f, message: 'must be a URL or null' });
    else if (redirectEntryProblem(v)) problems.push({ field: f, message: redirectEntryProblem(v) as string });
    else if (!isUrlAllowed(v, validAllow))
      problems.push({ field: f, message: 'must be allowed by allowed_redirect_urls (add it there first)' });
  }
  if (s.require_email_confirmation === true && !s.email_verification_url) {
    problems.push({ field: 'email_verification_url', message: 'is required when require_email_confirmation is on' });
  }
  if (s.magic_link_enabled === true && !s.magic_link_url) {
    problems.push({ field: 'magic_link_url', message: 'is required when magic_link_enabled is on' });
  }

  for (const name of CLIENT_SECRET_PROVIDERS) {
    const p = s.providers[name];
    if (typeof p.enabled !== 'boolean') problems.push({ field: `providers.${name}.enabled`, message: 'must be true or false' });
    for (const f of ['client_id', 'client_secret'] as const) {
      if (p[f] !== null && typeof p[f] !== 'string')
        problems.push({ field: `providers.${name}.${f}`, message: 'must be a string or null' });
      else if (p.enabled === true && !nonEmpty(p[f]))
        problems.push({ field: `providers.${name}.${f}`, message: 'is required to enable the provider' });
    }
  }
  const apple = s.providers.apple;
  if (typeof apple.enabled !== 'boolean') problems.push({ field: 'providers.apple.enabled', message: 'must be true or false' });
  for (const f of APPLE_FIELDS) {
    if (apple[f] !== null && typeof apple[f] !== 'string')
      problems.push({ field: `providers.apple.${f}`, message: 'must be a string or null' });
    else if (apple.enabled === true && !nonEmpty(apple[f]))
      problems.push({ field: `providers.apple.${f}`, message: 'is required to enable Apple sign-in' });
  }
  if (
    typeof apple.private_key === 'string' &&
    apple.private_key &&
    !/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(apple.private_key)
  ) {
    problems.push({ field: 'providers.apple.private_key', message: 'must be the PEM text of the .p8 key file' });
  }

  validateOidcProviders(problems, s.oidc_providers);
  validatePasskeys(problems, s);

  for (const [kind, tpl] of Object.entries(s.email_templates ?? {})) {
    for (const [f, v] of Object.entries(tpl ?? {})) {
      if (!['subject', 'html', 'text'].includes(f))
        problems.push({ field: `email_templates.${kind}.${f}`, message: 'must be subject, html or text' });
      else if (typeof v !== 'string' || v.length > 100_000)
        problems.push({ field: `email_templates.${kind}.${f}`, message: 'must be a string (at most 100,000 characters)' });
    }
  }
  return problems;
}
