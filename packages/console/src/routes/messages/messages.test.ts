import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole } from '../../../test/browser.js';

// Messages in Chromium: a verification mail read in the dev inbox (HTML in a sandboxed frame,
// its link clickable), newest first, filtered by recipient; the delivery log with status and
// the provider's answer.

let s: ConsoleServer;
beforeAll(async () => {
  s = await startConsole();
  await s.t.settings.updateAuth({ require_email_confirmation: true });
});
afterAll(async () => {
  await s?.stop();
});

describe('messages', () => {
  it('reads a verification mail in the dev inbox and follows its link', async () => {
    for (let i = 1; i <= 11; i++) {
      const res = await s.t.app.inject({
        method: 'POST',
        url: '/api/v1/email/test',
        headers: s.t.as.service,
        payload: { to: `filler${i}@example.com` },
      });
      expect(res.statusCode).toBe(200);
    }
    const signup = await s.t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: s.t.as.anon,
      payload: { email: 'grace@example.com', password: 'correct horse battery' },
    });
    expect(signup.statusCode).toBe(200);
    await s.t.messaging.outbox.drain();

    const context = await s.browser.newContext();
    try {
      const w = await openPage(context);
      const { page } = w;
      await signIn(w, s.url);
      await page.getByRole('link', { name: 'Messages' }).first().click();
      const inbox = page.getByRole('list', { name: 'Dev inbox' });
      await inbox.waitFor();
      // Newest first, past ten messages.
      expect(await inbox.getByRole('button').first().textContent()).toContain('grace@example.com');
      expect(await page.getByRole('status').filter({ hasText: 'newest first' }).textContent()).toBe('12 messages, newest first');

      await page.getByLabel('Recipient').fill('grace@example.com');
      const filtered = answerOf(page, '/api/v1/dev/inbox');
      await page.getByRole('button', { name: 'Filter' }).click();
      expect(new URL((await filtered).url()).searchParams.get('to')).toBe('grace@example.com');
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'newest first' }).textContent()).toBe('1 message, newest first');
      await inbox.getByRole('button').first().click();
      const mail = page.getByRole('article', { name: 'Message to grace@example.com' });
      await mail.getByRole('heading', { name: 'Confirm your email for Plinth project' }).waitFor();
      const frame = page.frameLocator('iframe[title="Email to grace@example.com"]');
      const link = frame.getByRole('link', { name: 'Confirm email' });
      const href = (await link.getAttribute('href')) ?? '';
      expect(href).toMatch(/^https:\/\/app\.example\.com\/verify\?token=[\w-]{43}$/);
      expect(await page.locator('iframe[title="Email to grace@example.com"]').getAttribute('sandbox')).toBe(
        'allow-popups allow-popups-to-escape-sandbox',
      );
      await shot(page, 'messages-inbox');

      // The link is clickable: it opens the app's page in a new tab (the app is not running here).
      await context.route('https://app.example.com/**', (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<p>app</p>' }),
      );
      const popup = context.waitForEvent('page');
      await link.click();
      expect((await popup).url()).toBe(href);
      // And the token in it verifies the address.
      const token = new URL(href).searchParams.get('token');
      const verified = await s.t.app.inject({ method: 'POST', url: '/v1/auth/verify-email', headers: s.t.as.anon, payload: { token } });
      expect(verified.statusCode).toBe(200);

      await page.getByRole('tab', { name: 'Delivery log' }).click();
      const log = page.getByRole('table', { name: 'Delivery log' });
      await log.waitFor();
      const row = log.getByRole('row').nth(1);
      expect(await row.getByRole('cell').allTextContents()).toEqual([
        expect.any(String),
        'email',
        'verification',
        'grace@example.com',
        'sent',
        '1',
        expect.stringContaining('dev inbox'),
      ]);
      await page.getByLabel('Status').selectOption('failed');
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'newest first' }).textContent()).toBe('0 entries, newest first');
      await page.getByLabel('Status').selectOption('sent');
      await shot(page, 'messages-log');
      w.expectClean();
    } finally {
      await context.close();
    }
  });
});
