import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../server/test/harness.js';
import { launchChromium } from '../../../server/test/chromium.js';

// A browser app in development, as a new user builds one: a page served by a dev server on
// another local port (Vite's localhost:5173) calls the API through the SDK. While PUBLIC_URL is
// a localhost address that works with no setting at all (cors_allow_localhost); on a server
// whose PUBLIC_URL is a real host the browser is refused, and the server's log says once which
// setting would allow it (the browser itself only says "Failed to fetch").

declare global {
  interface Window {
    read: () => Promise<{ data: unknown; error: { code: string } | null }>;
  }
}

/** The app page: the SDK the server hosts, a client of `api`, one read of `notes`. */
function appPage(api: string, key: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>app</title>
<script type="module">
  import { createClient } from '${api}/sdk/plinth.js';
  const client = createClient('${api}', '${key}');
  window.read = async () => { const { data, error } = await client.from('notes').select('body'); return { data, error }; };
</script></head><body>app</body></html>`;
}

interface Api {
  t: TestServer;
  url: string;
  logs: string[];
}

async function startApi(publicUrl: string): Promise<Api> {
  const logs: string[] = [];
  const t = await createTestServer({ PUBLIC_URL: publicUrl, LOG_LEVEL: 'warn' }, { logs });
  const res = await t.sql(`
    create table notes (id bigserial primary key, body text not null);
    create policy anyone_reads on notes for select using (true);
    grant select on notes to anon;
    insert into notes (body) values ('hello from the API');`);
  expect(res.statusCode, res.body).toBe(200);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, logs };
}

let pages: Server;
let devOrigin: string;
let browser: Browser;
const apis: Api[] = [];

beforeAll(async () => {
  pages = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(appPage(q.get('api') ?? '', q.get('key') ?? ''));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  // The dev server's page, on localhost and its own port, as Vite serves one.
  devOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  for (const api of apis) await api.t.stop();
});

async function openApp(api: Api): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${devOrigin}/?api=${encodeURIComponent(api.url)}&key=${api.t.keys.publicKey}`);
  await page.waitForFunction(() => typeof window.read === 'function', undefined, { timeout: 10_000 });
  return page;
}

const refusals = (api: Api) => api.logs.filter((l) => l.includes('CORS: refused'));

describe('a page on another local port (a dev server) calling the API through the SDK', () => {
  it('works with no setting while PUBLIC_URL is a localhost address', async () => {
    const api = await startApi('http://localhost:8080');
    apis.push(api);
    const page = await openApp(api);
    try {
      expect(await page.evaluate(() => window.read())).toEqual({ data: [{ body: 'hello from the API' }], error: null });
      expect(refusals(api)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('is refused on a server with a public PUBLIC_URL, and the log names the setting once per origin', async () => {
    const api = await startApi('https://api.example.com');
    apis.push(api);
    const page = await openApp(api);
    try {
      for (let i = 0; i < 2; i++) {
        const { data, error } = await page.evaluate(() => window.read());
        expect(data).toBeNull();
        expect(error?.code).toBe('network_error');
      }
      expect(refusals(api)).toHaveLength(1);
      const line = JSON.parse(refusals(api)[0]) as { level: number; origin: string; msg: string };
      expect(line.level).toBe(40);
      expect(line.origin).toBe(devOrigin);
      expect(line.msg).toBe(
        `CORS: refused a request from the page origin ${devOrigin}: add ${devOrigin} to the cors_origins auth setting (console: Auth → URLs; or PATCH /api/v1/settings/auth); local pages are allowed by default only while PUBLIC_URL is a localhost address, and it is https://api.example.com`,
      );
      // The setting it names does allow it.
      await api.t.settings.updateAuth({ cors_origins: [devOrigin] });
      expect(await page.evaluate(() => window.read())).toEqual({ data: [{ body: 'hello from the API' }], error: null });
    } finally {
      await page.close();
    }
  });
});
