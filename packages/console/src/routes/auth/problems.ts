import { isUrlAllowed, redirectEntryProblem } from '@plinth/shared';
import type { AuthSettings } from '../../lib/api';

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

/** What the console refuses before asking the server (the spec: "the console blocks the save"). */
export function localProblems(d: Draft): Problems {
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
  return out;
}
