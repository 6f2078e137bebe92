import { js } from './rest';

/**
 * Snippets of a request the console really sent (captured through the SDK's `fetch` hook): a
 * cURL command with exactly its method, URL, headers and body, and the SDK call. Keys and
 * tokens become shell or environment variables unless the caller asks to inline a key. No DOM.
 */

/** A request as it left the browser. */
export interface SentRequest {
  method: string;
  url: string;
  /** Header names in lower case, in the order they were set. */
  headers: Array<[string, string]>;
  body: string | null;
}

/** A secret value and the variable that stands for it in snippets. */
export interface Secret {
  value: string;
  variable: string;
}

export const VARS = {
  publicKey: 'PLINTH_PUBLIC_KEY',
  secretKey: 'PLINTH_SECRET_KEY',
  userToken: 'PLINTH_USER_TOKEN',
  userPassword: 'PLINTH_USER_PASSWORD',
} as const;

/**
 * A word for a POSIX shell, single-quoted (a `'` becomes `'\''`).
 * @example shellQuote("it's") // "'it'\\''s'"
 */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * A shell word for `text` in which each secret's value becomes `$VARIABLE`: double-quoted when
 * that is safe, else single-quoted pieces joined with the quoted variables.
 * @example shellWithVars('apikey: pk_1', [{ value: 'pk_1', variable: 'PLINTH_PUBLIC_KEY' }]) // '"apikey: $PLINTH_PUBLIC_KEY"'
 */
export function shellWithVars(text: string, secrets: Secret[]): string {
  const parts: Array<{ literal: string } | { variable: string }> = [];
  let rest = text;
  for (;;) {
    let best: { at: number; s: Secret } | null = null;
    for (const s of secrets) {
      if (!s.value) continue;
      const at = rest.indexOf(s.value);
      if (at !== -1 && (best === null || at < best.at)) best = { at, s };
    }
    if (!best) break;
    if (best.at > 0) parts.push({ literal: rest.slice(0, best.at) });
    parts.push({ variable: best.s.variable });
    rest = rest.slice(best.at + best.s.value.length);
  }
  if (rest) parts.push({ literal: rest });
  if (!parts.some((p) => 'variable' in p)) return shellQuote(text);
  if (parts.every((p) => 'variable' in p || /^[^"$`\\!]*$/.test(p.literal))) {
    // `$NAME` runs on while letters follow: `${NAME}` then.
    const ref = (v: string, next: (typeof parts)[number] | undefined) =>
      next && 'literal' in next && /^\w/.test(next.literal) ? `\${${v}}` : `$${v}`;
    return `"${parts.map((p, i) => ('variable' in p ? ref(p.variable, parts[i + 1]) : p.literal)).join('')}"`;
  }
  return parts.map((p) => ('variable' in p ? `"$${p.variable}"` : shellQuote(p.literal))).join('');
}

/** Replaces the origin the console called with the server's public URL (same path and query). */
export function publicUrlOf(url: string, calledBase: string, publicBase: string): string {
  const from = calledBase.replace(/\/+$/, '');
  return url.startsWith(`${from}/`) ? `${publicBase.replace(/\/+$/, '')}${url.slice(from.length)}` : url;
}

/**
 * The cURL command of a sent request.
 * @example curlSnippet(sent, { calledBase: 'http://localhost:8080', publicBase: 'https://api.example.com', secrets })
 */
export function curlSnippet(req: SentRequest, options: { calledBase: string; publicBase: string; secrets: Secret[] }): string {
  const lines = [`curl -X ${req.method} ${shellQuote(publicUrlOf(req.url, options.calledBase, options.publicBase))}`];
  for (const [name, value] of req.headers) lines.push(`  -H ${shellWithVars(`${name}: ${value}`, options.secrets)}`);
  if (req.body !== null) lines.push(`  --data-raw ${shellWithVars(req.body, options.secrets)}`);
  return lines.join(' \\\n');
}

/** Who the SDK snippet calls as. */
export type SnippetCaller = { kind: 'anon' } | { kind: 'secret' } | { kind: 'user'; email: string };

/** `process.env.X`, or the key itself when the caller chose to inline keys. */
function keyExpr(variable: string, inline: string | null): string {
  return inline ? js(inline) : `process.env.${variable}`;
}

/**
 * The opening of an SDK snippet: the import, `createClient` with the public URL and the key,
 * and for a test user the sign-in (the SDK then sends their token itself).
 * @example sdkPreamble({ kind: 'anon' }, 'https://api.example.com', null)
 */
export function sdkPreamble(caller: SnippetCaller, publicBase: string, inlineKey: string | null): string {
  const lines = ["import { createClient } from '@plinth/sdk';", ''];
  if (caller.kind === 'secret') {
    lines.push('// Server-side only: the secret key bypasses row-level security.');
    lines.push(`const client = createClient(${js(publicBase)}, ${keyExpr(VARS.secretKey, inlineKey)});`);
  } else {
    lines.push(`const client = createClient(${js(publicBase)}, ${keyExpr(VARS.publicKey, inlineKey)});`);
  }
  if (caller.kind === 'user') {
    lines.push('// Sign in first: the SDK sends the user’s access token with every call.');
    lines.push(`await client.auth.signIn({ email: ${js(caller.email)}, password: process.env.${VARS.userPassword} });`);
  }
  return lines.join('\n');
}

/**
 * An SDK snippet: the preamble, then `const { data, error[, count] } = await <code>;`.
 * @example renderSdk({ kind: 'anon' }, 'https://api.example.com', null, renderChain('todos', steps), false)
 */
export function renderSdk(caller: SnippetCaller, publicBase: string, inlineKey: string | null, code: string, counted: boolean): string {
  const result = counted ? '{ data, error, count }' : '{ data, error }';
  return `${sdkPreamble(caller, publicBase, inlineKey)}\n\nconst ${result} = await ${code};`;
}
