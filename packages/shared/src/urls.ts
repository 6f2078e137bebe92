/** URL and origin rules of docs/api.md §4, as pure functions shared by the server and the console (its "Does this URL pass?" tester runs the very matcher the server uses). */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function parseHttpUrl(value: string): URL | null {
  if (typeof value !== 'string' || value.length > 2048 || /[\s\\]/.test(value)) return null;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password || !u.hostname) return null;
  return u;
}

const portOf = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');

/** Why a redirect allowlist entry is refused, or null when it is fine. */
export function redirectEntryProblem(value: string): string | null {
  if (typeof value !== 'string' || !value) return 'must be an absolute http(s) URL';
  if (/^\s*javascript:/i.test(value)) return 'javascript: URLs are not allowed';
  if (
    /@/.test(
      value
        .split('?')[0]
        .split('#')[0]
        .replace(/^[a-z]+:\/\//i, '')
        .split('/')[0],
    )
  )
    return 'must not carry userinfo (user@host)';
  if (/\*/.test(value)) return 'wildcards are not allowed in redirect URLs';
  return parseHttpUrl(value) ? null : 'must be an absolute http(s) URL';
}

/**
 * Why an OpenID Connect issuer URL is refused, or null: https, or plain http on a loopback host
 * (a provider on this machine); no userinfo, query or fragment. It is kept exactly as typed: the
 * discovery document must name the very same string.
 * @example issuerProblem('https://sso.example.com/realms/acme') // null
 * @example issuerProblem('http://sso.example.com') // 'must be https (plain http only on localhost, 127.0.0.1 or [::1])'
 */
export function issuerProblem(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return 'must be the issuer URL (https://…)';
  if (/[?#]/.test(value)) return 'must not have a query or fragment';
  const u = parseHttpUrl(value);
  if (!u) return 'must be an absolute https URL without userinfo';
  if (u.protocol === 'http:' && !LOOPBACK.has(u.hostname) && !/^127\.\d+\.\d+\.\d+$/.test(u.hostname))
    return 'must be https (plain http only on localhost, 127.0.0.1 or [::1])';
  return null;
}

/** Whether an issuer is plain http on a loopback host (then its endpoints may be plain http too). */
export function isLoopbackHttp(value: string): boolean {
  return issuerProblem(value) === null && value.startsWith('http:');
}

/**
 * Whether `url` is allowed by an allowlist entry: same scheme, host and port, and a path equal
 * to the entry's or continuing it after a `/`. Query and fragment do not matter.
 * @example isUrlAllowed('https://app.example.com/auth/cb?x=1', ['https://app.example.com/auth']) // true
 * @example isUrlAllowed('https://app.example.com/authx', ['https://app.example.com/auth']) // false
 */
export function isUrlAllowed(url: string, allowlist: readonly string[]): boolean {
  if (redirectEntryProblem(url) !== null) return false;
  const u = parseHttpUrl(url);
  if (!u) return false;
  for (const entry of allowlist) {
    const e = parseHttpUrl(entry);
    if (!e) continue;
    if (u.protocol !== e.protocol || u.hostname !== e.hostname || portOf(u) !== portOf(e)) continue;
    const base = e.pathname.replace(/\/+$/, '');
    if (base === '' || u.pathname === e.pathname || u.pathname === base || u.pathname.startsWith(`${base}/`)) return true;
  }
  return false;
}

export interface OriginPattern {
  scheme: string;
  host: string;
  /** A port, or '*' (loopback hosts only). */
  port: string;
}

/**
 * Parses a `cors_origins` entry: `scheme://host[:port]`, `*` as port only on loopback hosts,
 * no path, query, fragment, userinfo or other wildcard. Returns the pattern or a problem.
 * @example parseOriginEntry('http://localhost:*') // { scheme: 'http', host: 'localhost', port: '*' }
 */
export function parseOriginEntry(value: string): OriginPattern | { problem: string } {
  if (typeof value !== 'string') return { problem: 'must be a string' };
  const m = /^(https?):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\*|\d{1,5}))?\/?$/.exec(value);
  if (!m) {
    if (/\*/.test(value) && !/:\*\/?$/.test(value))
      return { problem: 'wildcards are allowed only as the port of localhost, 127.0.0.1 or [::1]' };
    return { problem: 'must be scheme://host[:port] with an http or https scheme and no path' };
  }
  const [, scheme, rawHost, port] = m;
  const host = rawHost.toLowerCase();
  if (port === '*' && !LOOPBACK.has(host)) return { problem: 'a port wildcard is allowed only on localhost, 127.0.0.1 or [::1]' };
  if (port !== undefined && port !== '*' && (Number(port) < 1 || Number(port) > 65535)) return { problem: 'port out of range' };
  if (host.startsWith('.') || host.endsWith('.') || host.includes('..')) return { problem: 'invalid host' };
  return { scheme, host, port: port ?? (scheme === 'https' ? '443' : '80') };
}

/**
 * Whether a URL or an origin is on a loopback host (`localhost`, `127.0.0.1`, `[::1]`), http or https.
 * @example isLoopback('http://localhost:5173') // true
 * @example isLoopback('https://app.example.com') // false
 */
export function isLoopback(urlOrOrigin: string): boolean {
  const u = parseHttpUrl(urlOrOrigin);
  return u !== null && LOOPBACK.has(u.hostname.toLowerCase());
}

/**
 * Whether a browser `Origin` header matches one of the parsed patterns.
 * @example originMatches('http://localhost:5173', [{ scheme: 'http', host: 'localhost', port: '*' }]) // true
 */
export function originMatches(origin: string, patterns: readonly OriginPattern[]): boolean {
  const m = /^(https?):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(origin);
  if (!m) return false;
  const scheme = m[1];
  const host = m[2].toLowerCase();
  const port = m[3] ?? (scheme === 'https' ? '443' : '80');
  return patterns.some((p) => p.scheme === scheme && p.host === host && (p.port === '*' || p.port === port));
}
