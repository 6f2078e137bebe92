import { describe, expect, it } from 'vitest';
import { startServer } from './server.js';

// Settings an SDK user depends on (CORS for a browser app) must be in force once saved, also
// when two changes are saved in quick succession (an admin saving two forms, a setup script).
// PostgreSQL only: there the NOTIFY-triggered reloads of the settings cache run on several
// connections and can finish out of order; PGlite runs one query at a time.

/** What a browser asks before an app's cross-origin `fetch` with the SDK's headers. */
async function preflight(url: string, origin: string): Promise<string | null> {
  const res = await fetch(`${url}/v1/auth/signin`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey,content-type' },
  });
  return res.headers.get('access-control-allow-origin');
}

describe('auth settings saved one right after another', () => {
  it('the second change is in force afterwards (cors_origins), not only the first', async () => {
    // A fresh server each time: the first changes after start are when the race shows most.
    for (let attempt = 0; attempt < 5; attempt++) {
      // Saves the redirect allowlist and email pages; local pages only through cors_origins.
      const s = await startServer({ cors_allow_localhost: false });
      try {
        const origin = `http://127.0.0.1:${4100 + attempt}`;
        await s.t.settings.updateAuth({ cors_origins: [origin] });
        // Every instance reloads on NOTIFY; give those reloads time to land.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await preflight(s.url, origin), `attempt ${attempt}: cors_origins [${origin}] was saved`).toBe(origin);
        expect(s.t.settings.auth().allowed_redirect_urls).toEqual(['https://app.example.com']);
      } finally {
        await s.t.stop();
      }
    }
  });
});
