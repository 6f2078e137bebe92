/**
 * What a `route_not_found` answer suggests: the registered route the path most likely meant (a
 * typo, another case). Supabase's paths are served as they are (docs/supabase.md), so they get
 * the same suggestions as Plinth's own.
 */
import { closest, editDistance } from '../lib/index.js';

export interface KnownRoute {
  method: string;
  url: string;
}

/** How far a path is from a route pattern, segment by segment (`:param` takes any segment, `*` the rest). */
function distance(segments: string[], pattern: string[], limit: number): number {
  let total = 0;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '*') return total;
    const s = segments[i];
    if (s === undefined) return limit + 1;
    if (p.startsWith(':')) continue;
    total += s === p ? 0 : s.toLowerCase() === p.toLowerCase() ? 0.5 : editDistance(s.toLowerCase(), p.toLowerCase(), limit);
    if (total > limit) return limit + 1;
  }
  return segments.length === pattern.length ? total : limit + 1;
}

/**
 * The route a path most likely meant: the same method, the request's own values in the
 * pattern's parameters. Null when nothing is close.
 * @example suggestRoute('GET', '/api/v1/dv/todos', routes) // '/api/v1/db/todos'
 */
export function suggestRoute(method: string, path: string, routes: readonly KnownRoute[]): string | null {
  // No route is this long: a path past it is no typo, and is not worth the comparisons.
  if (path.length > 300) return null;
  const segments = path.split('/').slice(1);
  const limit = Math.max(1, Math.floor(path.length / 8));
  let best: { route: string[]; d: number } | null = null;
  for (const r of routes) {
    if (r.method !== method && !(method === 'HEAD' && r.method === 'GET')) continue;
    const pattern = r.url.split('/').slice(1);
    const d = distance(segments, pattern, limit);
    if (d <= limit && d > 0 && (!best || d < best.d)) best = { route: pattern, d };
  }
  if (!best) {
    // A path whose last segment is a mistyped fixed word of another route (`/v1/auth/sigin`).
    const byPath = closest(
      path,
      routes.filter((r) => r.method === method && !r.url.includes(':') && !r.url.includes('*')).map((r) => r.url),
    );
    return byPath;
  }
  const route = best.route;
  const star = route.indexOf('*');
  const head = (star === -1 ? route : route.slice(0, star)).map((p, i) => (p.startsWith(':') ? segments[i] : p));
  const tail = star === -1 ? [] : segments.slice(star);
  return `/${[...head, ...tail].join('/')}`;
}
