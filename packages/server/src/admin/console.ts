import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { App } from '../http/index.js';

/**
 * The built console: `console/` in the installed package (scripts/pack.mjs puts it there), else
 * packages/console/dist of the repository, from src/admin (tests) and dist/admin (built) alike.
 */
const DIST =
  [new URL('../../console/', import.meta.url), new URL('../../../console/dist/', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((dir) => existsSync(`${dir}index.html`)) ?? fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/**
 * The console's Content-Security-Policy: scripts, fonts, connections and frames from this
 * origin only, no plugins, no framing by others, no <base> elsewhere. Styles also allow
 * inline: CodeMirror writes its theme at run time and the dev inbox shows mails (with their
 * inline styles) in a sandboxed iframe without scripts; a style cannot run code.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:", // blob: the object previews the console fetched (R12)
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/**
 * Serves the built console (packages/console/dist) at /console. Every page URL gets
 * index.html with a relative `<base href>` (`./`, `../`, …) pointing at /console/, so assets
 * and the API are found relative to the page: the console also works below a proxy's path
 * prefix. Hashed assets are cached for a year; pages are never cached.
 * @example await registerConsole(app)
 */
export async function registerConsole(app: App): Promise<void> {
  const built = existsSync(`${DIST}index.html`);
  if (built) await app.register(fastifyStatic, { root: DIST, serve: false });
  let template: string | null = null;

  // A redirect relative to the request: /prefix/console → /prefix/console/.
  app.get('/console', async (_req, reply) => reply.redirect('console/'));
  app.get('/', async (_req, reply) => reply.redirect('console/'));
  app.get('/console/*', async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    reply.headers(SECURITY_HEADERS);
    if (!built) {
      reply.code(503).type('text/html; charset=utf-8');
      return '<!doctype html><title>Plinth console</title><p>The console is not built: run <code>npm run build</code>.</p>';
    }
    if (/^assets\/[\w.-]+$/.test(rest)) {
      if (!existsSync(`${DIST}${rest}`)) {
        reply.code(404);
        return { code: 'not_found', message: `No console asset ${rest}.` };
      }
      return reply.header('cache-control', 'public, max-age=31536000, immutable').sendFile(rest);
    }
    if (/^[\w.-]+\.(svg|ico|png)$/.test(rest) && existsSync(`${DIST}${rest}`)) return reply.sendFile(rest);
    template ??= readFileSync(`${DIST}index.html`, 'utf8');
    const depth = rest.split('/').length - 1;
    const base = depth > 0 ? '../'.repeat(depth) : './';
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache');
    return template.replace('<head>', `<head><base href="${base}">`);
  });
}
