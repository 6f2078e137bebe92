/**
 * The admin API of a server, as `plinth functions deploy|rollback|…` and `plinth secrets
 * --url` reach it: the server named by `--url` with `--key` (or PLINTH_SECRET_KEY), and one
 * request at a time whose error answer is one line naming its cause and the fix.
 */
import { flagValue } from './args.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';

/** A server's base URL and its secret key. */
export interface Remote {
  url: string;
  key: string;
}

/**
 * The server of `--url`, with `--key` (or PLINTH_SECRET_KEY, or the project's); null without
 * `--url`. A URL that is not one, or no key, is one line (exit 2).
 * @example const t = remoteOf(ctx); // { url: 'https://api.example.com', key: 'sk_…' }
 */
export function remoteOf(ctx: CommandContext): Remote | null {
  const url = flagValue(ctx.args, 'url');
  if (url === undefined) return null;
  const key = flagValue(ctx.args, 'key') ?? process.env.PLINTH_SECRET_KEY ?? ctx.config.secretKey ?? undefined;
  if (!/^https?:\/\/[^/]+/.test(url)) fail(`--url must be the server's base URL (e.g. --url https://api.example.com), not "${url}"`, 2);
  if (!key) fail(`--url needs the server's secret key: add --key sk_… (or set PLINTH_SECRET_KEY)`, 2);
  return { url: url.replace(/\/+$/, ''), key };
}

/** A server's error answer: its status, code and message. */
export interface AdminRefusal {
  status: number;
  code: string | undefined;
  message: string | undefined;
}

/**
 * One request to `<url>/api/v1/admin<path>`: the answer's JSON (null for 204). An unreachable
 * server, a refused key, a server without that API are one line each; another error answer is
 * `onError`'s line when it gives one, else the server's message and code.
 * @example await adminRequest(t, 'GET', '/function-secrets') // [{ name: 'PAY_KEY', value: '********' }]
 */
export async function adminRequest(
  t: Remote,
  method: string,
  path: string,
  body?: unknown,
  onError?: (e: AdminRefusal) => string | undefined,
): Promise<unknown> {
  const res = await fetch(`${t.url}/api/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${t.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((err: Error & { cause?: { code?: string } }) =>
    fail(`${t.url} does not answer (${err.cause?.code ?? err.message}): is the server running, and the URL right?`),
  );
  if (res.status === 204) return null;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail(`${t.url} answered ${res.status} without JSON: is it a Plinth server (with functions deploy, 0.x or later)?`);
  }
  if (res.ok) return parsed;
  const e = parsed as { code?: string; message?: string };
  if (res.status === 401 || res.status === 403)
    fail(
      `${t.url} refused the key (${res.status} ${e.code}): functions are managed with the secret key (--key sk_…, or PLINTH_SECRET_KEY)`,
    );
  if (res.status === 404 && e.code === 'route_not_found') fail(`${t.url} has no functions admin API: upgrade that server's Plinth`);
  const own = onError?.({ status: res.status, code: e.code, message: e.message });
  fail(own ?? `${e.message ?? `${t.url} answered ${res.status}`} (${e.code ?? res.status})`);
}
