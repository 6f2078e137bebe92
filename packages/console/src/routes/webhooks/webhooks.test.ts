import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../../sdk/src/index.js';
import { type Receiver, startReceiver } from '../../../../server/test/receiver.js';
import { answerOf, type ConsoleServer, openPage, shot, signIn, startConsole } from '../../../test/browser.js';

// The Webhooks page in Chromium (issue 24's "done when"): a webhook made in the page to a local
// receiver, a row inserted through the SDK arrives as a POST whose signature verifies with the
// secret the page showed once, the delivery shows in the page's log, and its redeliver button
// sends it again. Along the way: a refused URL named at its field, header values masked on edit,
// switching off, rotating the secret, deleting.

let s: ConsoleServer;
let r: Receiver;
beforeAll(async () => {
  // The receiver is on 127.0.0.1: private addresses allowed for this server.
  s = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  r = await startReceiver();
  const res = await s.t.sql(`create table signups (id bigserial primary key, email text not null, plan text not null default 'free');
    create policy anyone_signs_up on signups for insert to anon with check (true);`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await r?.close();
  await s?.stop();
});

/** A signature check written out (docs/webhooks.md's): HMAC-SHA256 of "t.body", any v1. */
function verified(secret: string, header: string, body: string): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

describe('the Webhooks page', () => {
  it('creates a webhook, a row inserted through the SDK reaches the receiver signed, the log shows it, redeliver sends it again', async () => {
    const context = await s.browser.newContext();
    try {
      const w = await openPage(context);
      const { page } = w;
      await signIn(w, s.url);
      await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await page.getByTestId('empty-state').waitFor();
      await shot(page, 'webhooks-empty');

      // A URL the server refuses is named at its field, and nothing is made.
      await page.getByRole('button', { name: 'Create webhook' }).first().click();
      const form = page.getByRole('form', { name: 'New webhook' });
      await form.getByLabel('Name', { exact: true }).fill('Welcome mails');
      await form.getByLabel('Table').selectOption('signups');
      await form.getByLabel('update').uncheck();
      await form.getByLabel('delete').uncheck();
      await form.getByLabel('URL').fill(`${r.url}/hooks#fragment`);
      await form.getByRole('button', { name: 'Add header' }).click();
      await form.getByLabel('Header 1 name').fill('Authorization');
      await form.getByLabel('Header 1 value').fill('Bearer receiver-token');
      w.allow(400);
      const refused = answerOf(page, '/api/v1/webhooks', 'POST');
      await form.getByRole('button', { name: 'Create webhook' }).click();
      expect((await refused).status()).toBe(400);
      await form.getByText('must not have a fragment (#…)').waitFor();
      await shot(page, 'webhooks-form-error');

      await form.getByLabel('URL').fill(`${r.url}/hooks`);
      const made = answerOf(page, '/api/v1/webhooks', 'POST');
      await form.getByRole('button', { name: 'Create webhook' }).click();
      expect((await made).status()).toBe(201);
      const secretBox = page.getByLabel('Secret', { exact: true });
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      expect(secret).toMatch(/^whsec_[\w-]{43}$/);
      await shot(page, 'webhooks-secret');
      await page.getByRole('button', { name: 'Done' }).click();
      await page
        .getByRole('list', { name: 'Webhooks' })
        .getByRole('button', { name: /Welcome mails/ })
        .waitFor();
      // Shown once: the page never shows it again.
      expect(await page.content()).not.toContain(secret);

      // A row inserted by an app, through the SDK, with the public key.
      const app = createClient(s.url, s.t.keys.publicKey);
      const inserted = await app.from('signups').insert({ email: 'ada@example.com' }, { returning: 'minimal' });
      expect(inserted.error).toBeNull();
      await expect.poll(() => r.received.length).toBe(1);
      const [post] = r.received;
      expect(post.json).toMatchObject({
        type: 'insert',
        table: 'signups',
        record: { email: 'ada@example.com', plan: 'free' },
        old_record: null,
      });
      expect(post.headers.authorization).toBe('Bearer receiver-token');
      expect(verified(secret, String(post.headers['plinth-signature']), post.body)).toBe(true);

      // The delivery in the page's log (it reads the log again by itself).
      const log = page.getByRole('table', { name: 'Deliveries' });
      const first = log.getByRole('row').filter({ hasText: `#${post.json.seq}` });
      await expect.poll(() => first.getByRole('cell').nth(1).textContent()).toBe('sent');
      expect(await first.getByRole('cell').nth(3).textContent()).toMatch(/^200 · ok \(\d+ ms\)$/);
      await shot(page, 'webhooks-log');

      // Its body and answer.
      await first.getByRole('button', { name: /^Details of delivery/ }).click();
      const details = page.getByRole('dialog', { name: `Delivery ${post.headers['plinth-delivery']}` });
      await details.getByText('"email": "ada@example.com"').waitFor();
      await shot(page, 'webhooks-delivery');
      await details.getByRole('button', { name: 'Close' }).click();

      // Redeliver: the same body again, a new delivery id, a new row in the log.
      const again = answerOf(page, /\/redeliver$/, 'POST');
      await first.getByRole('button', { name: /^Redeliver delivery/ }).click();
      expect((await again).status()).toBe(201);
      await expect.poll(() => r.received.length).toBe(2);
      expect(r.received[1].body).toBe(post.body);
      expect(r.received[1].headers['plinth-delivery']).not.toBe(post.headers['plinth-delivery']);
      await log.getByText(`redelivers ${post.headers['plinth-delivery']}`).waitFor();
      await expect.poll(() => log.getByRole('row').nth(1).getByRole('cell').nth(1).textContent()).toBe('sent');

      // Edit: the stored header value comes back masked and is kept when saved unchanged.
      await page.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('form', { name: 'Edit webhook' });
      expect(await edit.getByLabel('Header 1 value').inputValue()).toBe('********');
      await edit.getByLabel('Name', { exact: true }).fill('Welcome mails (new sign-ups)');
      const saved = answerOf(page, /\/api\/v1\/webhooks\/[\w-]+$/, 'PATCH');
      await edit.getByRole('button', { name: 'Save' }).click();
      expect((await saved).status()).toBe(200);
      await page.getByRole('region', { name: 'Welcome mails (new sign-ups)' }).waitFor();

      // Switched off: a sign-up meanwhile is not sent.
      await page.getByRole('switch', { name: /Enabled/ }).click();
      await page.getByRole('switch', { name: /Disabled/ }).waitFor();
      await app.from('signups').insert({ email: 'off@example.com' }, { returning: 'minimal' });
      await page.getByRole('switch', { name: /Disabled/ }).click();
      await page.getByRole('switch', { name: /Enabled/ }).waitFor();
      await app.from('signups').insert({ email: 'grace@example.com' }, { returning: 'minimal' });
      await expect.poll(() => r.received.length).toBe(3);
      expect(r.received[2].json.record?.email).toBe('grace@example.com');
      expect(r.received[2].headers.authorization).toBe('Bearer receiver-token');

      // Rotate: a new secret, shown once; the next request verifies with it (and the old one).
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate secret' }).click();
      await secretBox.waitFor();
      const rotated = await secretBox.inputValue();
      expect(rotated).not.toBe(secret);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByText('The secret before the last rotation also signs requests until').waitFor();
      await app.from('signups').insert({ email: 'linus@example.com' }, { returning: 'minimal' });
      await expect.poll(() => r.received.length).toBe(4);
      expect(verified(rotated, String(r.received[3].headers['plinth-signature']), r.received[3].body)).toBe(true);
      expect(verified(secret, String(r.received[3].headers['plinth-signature']), r.received[3].body)).toBe(true);
      // A failing answer: the log shows the attempt, the answer and when the next one is due;
      // the retry (the server's clock moved past its backoff) gets through, attempts 2.
      r.answer = (n) => (n === 4 ? { status: 503, body: 'busy, try later' } : { status: 200 });
      await app.from('signups').insert({ email: 'retry@example.com' }, { returning: 'minimal' });
      const newest = log.getByRole('row').nth(1);
      await expect.poll(() => newest.getByRole('cell').nth(3).textContent()).toMatch(/^503 · busy, try later/);
      expect(await newest.getByRole('cell').nth(1).textContent()).toMatch(/^queuednext /);
      expect(await newest.getByRole('cell').nth(2).textContent()).toBe('1');
      await shot(page, 'webhooks-retry');
      s.t.clock.advance(2_000);
      s.t.webhooks.kick();
      await expect.poll(() => newest.getByRole('cell').nth(1).textContent()).toBe('sent');
      expect(await newest.getByRole('cell').nth(2).textContent()).toBe('2');
      expect(r.received.map((x) => x.json.record?.email).slice(4)).toEqual(['retry@example.com', 'retry@example.com']);
      // Five deliveries in the log: the header row and five.
      await expect.poll(() => log.getByRole('row').count()).toBe(6);
      await shot(page, 'webhooks-page');
      // The nav, Webhooks, Functions and Admin included, is one row at 1280 px: every link at the
      // same height, and Sign out beside them.
      const tops = await page
        .getByRole('navigation', { name: 'Console pages' })
        .getByRole('link')
        .evaluateAll((links) => links.map((l) => Math.round(l.getBoundingClientRect().top)));
      expect(tops.length).toBe(11);
      expect(new Set(tops).size, `link tops ${tops.join(', ')}`).toBe(1);
      const signOut = await page.getByRole('button', { name: 'Sign out' }).evaluate((b) => b.getBoundingClientRect().bottom);
      expect(signOut).toBeLessThan(Math.min(...tops) + 60);

      // On a phone.
      await page.setViewportSize({ width: 390, height: 844 });
      // Nothing sticks out sideways (the log's table scrolls in its own box).
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
      await shot(page, 'webhooks-phone');
      await page.setViewportSize({ width: 1280, height: 800 });

      // Delete. A poll of its delivery log already on its way when the delete commits answers 404
      // (the browser logs it); the page then stops polling it.
      w.allow(404);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const gone = answerOf(page, /\/api\/v1\/webhooks\/[\w-]+$/, 'DELETE');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Delete webhook' }).click();
      expect((await gone).status()).toBe(204);
      await page.getByTestId('empty-state').waitFor();
      w.expectClean();
    } finally {
      await context.close();
    }
  });
});
