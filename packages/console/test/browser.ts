import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createTestServer, type TestServer } from '../../server/test/harness.js';
import { freePort } from '../../server/test/process.js';
import { launchChromium } from '../../server/test/chromium.js';

/**
 * The console's end-to-end harness: a whole Plinth (the server's own test harness: PGlite, or
 * PostgreSQL with PLINTH_TEST_DB) listening on a real loopback port with PUBLIC_URL equal to
 * it, serving the built console, and Debian's Chromium driven by playwright-core. Pages fail
 * their test on any page error or console error (an HTTP error the test expects is declared).
 */

export const ADMIN = { email: 'ops@example.com', password: 'a long admin passphrase' };
export const APP = 'https://app.example.com';
const SHOTS = resolve(fileURLToPath(new URL('../../../.tmp/console/', import.meta.url)));

export interface ConsoleServer {
  t: TestServer;
  /** `http://127.0.0.1:<port>`, also the server's PUBLIC_URL. */
  url: string;
  browser: Browser;
  stop(): Promise<void>;
}

/**
 * Starts the server (with `env`) and Chromium. With `admin`, ADMIN_EMAIL/ADMIN_PASSWORD make
 * the admin at start; without, the server has a setup link (`t.admin.setupToken`). `port`: one
 * chosen before (a provider started first must know the callback URL); `auth`: more settings.
 */
export async function startConsole(
  options: { admin?: boolean; env?: Record<string, string>; smtp?: boolean; port?: number; auth?: Record<string, unknown> } = {},
): Promise<ConsoleServer> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const env = {
    PUBLIC_URL: url,
    ...(options.admin === false ? {} : { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }),
    ...options.env,
  };
  const t = await createTestServer(
    { AUTH_RATE_REQUESTS_IP: '100000/60', AUTH_RATE_SIGNIN_IP: '100000/900', ...env },
    { smtp: options.smtp ?? false },
  );
  try {
    // `auth` joins this one update (as packages/sdk/test/e2e/server.ts does its settings).
    await t.settings.updateAuth({ allowed_redirect_urls: [APP], email_verification_url: `${APP}/verify`, ...options.auth });
    await t.app.listen({ port, host: '127.0.0.1' });
  } catch (err) {
    await t.stop();
    throw err;
  }
  const browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
  return {
    t,
    url,
    browser,
    async stop() {
      await browser.close().catch(() => undefined);
      await t.stop();
    },
  };
}

/** Console problems seen on a page: page errors, console errors, HTTP errors not declared. */
export interface Watched {
  page: Page;
  /** Declares that an HTTP status is expected from now on (a refused login, a 400 the test provokes). */
  allow(...statuses: number[]): void;
  /** Fails the test if anything unexpected was logged. */
  expectClean(): void;
  /** For a test that cuts the network on purpose (failed loads are logged): no script error at least. */
  expectNoPageErrors(): void;
}

export async function openPage(context: BrowserContext): Promise<Watched> {
  const page = await context.newPage();
  const problems: string[] = [];
  const allowed = new Set<number>();
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const status = /status of (\d{3})/.exec(m.text())?.[1];
    if (status && allowed.has(Number(status))) return;
    problems.push(`console.error: ${m.text()}`);
  });
  return {
    page,
    allow: (...s) => {
      for (const x of s) allowed.add(x);
    },
    expectClean: () => expect(problems, problems.join('\n')).toEqual([]),
    expectNoPageErrors: () => expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]),
  };
}

/** A phone's width (CSS pixels), for the `phone` screenshots. */
const PHONE = { width: 390, height: 844 };

/**
 * Saves the page in light and in dark (prefers-color-scheme) as .tmp/console/<name>-light|dark.png;
 * with `phone`, also at a phone's width (<name>-phone-light|dark.png).
 */
export async function shot(page: Page, name: string, options: { phone?: boolean } = {}): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(SHOTS, `${name}-${scheme}.png`), fullPage: true });
  }
  if (options.phone) {
    const size = page.viewportSize();
    await page.setViewportSize(PHONE);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(SHOTS, `${name}-phone-${scheme}.png`), fullPage: true });
    }
    if (size) await page.setViewportSize(size);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Signs in through the login page and waits for the overview. */
export async function signIn(w: Watched, base: string, credentials = ADMIN): Promise<void> {
  const { page } = w;
  await page.goto(`${base}/console/login`);
  await page.getByLabel('Email').fill(credentials.email);
  await page.getByLabel('Password').fill(credentials.password);
  const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/admin/login'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  expect((await answer).status()).toBe(200);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** Waits for the answer of the next request whose path ends with `path` (or matches it), with that method. */
export function answerOf(page: Page, path: string | RegExp, method = 'GET') {
  const matches = (p: string) => (typeof path === 'string' ? p.endsWith(path) : path.test(p));
  return page.waitForResponse((r) => matches(new URL(r.url()).pathname) && r.request().method() === method, { timeout: 20_000 });
}
