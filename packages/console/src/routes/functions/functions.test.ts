import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../../server/test/chromium.js';
import { type FunctionsServer, functionsServer } from '../../../../server/test/functions.js';
import { freePort } from '../../../../server/test/process.js';
import { bundleCode, DEPLOYED_RUNTIME } from '../../../../server/src/functions/index.js';
import { fakeClock } from '../../../../server/src/lib/clock.js';
import { ADMIN, answerOf, openPage, shot, signIn } from '../../../test/browser.js';

// The Functions page in Chromium (issue 38): a project's functions with their recent calls
// (status, duration, console output), a deployed function's versions and a rollback made in the
// page, the schedules with their last and next run, and the secrets masked, set and unset.

const MINUTE = 60_000;
const clock = fakeClock(Math.ceil(Date.now() / (60 * MINUTE)) * 60 * MINUTE + 30_000);
let s: FunctionsServer;
let browser: Browser;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  s = await functionsServer(
    {
      'functions/hello.ts': `export default (req: Request, ctx: any) => { console.log('hello from', ctx.role); return new Response('hi'); };`,
      'functions/nightly/index.ts': `export default () => { console.log('swept 3 rows'); return new Response('ok'); };`,
      'functions/nightly/config.json': '{"schedule": "*/10 * * * *"}',
      'functions/.env': 'PAY_KEY=pk_live_do_not_show\n',
      'src/pay-v1.ts': `export default () => new Response('pay one');`,
      'src/pay-v2.ts': `export default () => { console.warn('v2 is new'); return new Response('pay two', { status: 201 }); };`,
    },
    {
      env: { PUBLIC_URL: url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, AUTH_RATE_SIGNIN_IP: '100000/900' },
      clock,
      schedulePollMs: null,
    },
  );
  await s.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
  for (const file of ['src/pay-v1.ts', 'src/pay-v2.ts']) {
    const bundle = Buffer.from((await bundleCode(join(s.root, file), 'pay', DEPLOYED_RUNTIME)).code).toString('utf8');
    const res = await s.app.inject({ method: 'PUT', url: '/api/v1/admin/functions/pay', headers: s.service, payload: { bundle } });
    expect(res.statusCode, res.body).toBe(201);
  }
  for (const name of ['hello', 'pay', 'pay'])
    expect((await s.app.inject({ method: 'GET', url: `/api/v1/functions/${name}`, headers: s.anon })).statusCode).toBeLessThan(300);
});
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await s?.stop();
});

describe('the Functions page', () => {
  it('shows calls with their logs, rolls a deployed function back, shows schedules, masks, sets and unsets secrets', async () => {
    // One scheduled run.
    const next = (await s.app.functions?.schedules?.list())?.[0]?.next_at;
    clock.set(Date.parse(String(next)) + 1000);
    await s.app.functions?.schedules?.tick();
    await expect.poll(async () => (await s.app.functions?.schedules?.list())?.[0]?.last_status).toBe('ok');
    const context = await browser.newContext();
    try {
      const w = await openPage(context);
      const { page } = w;
      await signIn(w, url);
      await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Functions' }).click();
      await page.getByRole('heading', { name: 'Functions' }).waitFor();

      const fns = page.getByRole('list', { name: 'Functions' });
      await expect
        .poll(() => fns.getByRole('button').allInnerTexts())
        .toEqual([
          expect.stringMatching(/^hello\s+file\s+functions\/hello\.ts$/),
          expect.stringMatching(/^nightly\s+file\s+functions\/nightly\/index\.ts · \*\/10 \* \* \* \*$/),
          expect.stringMatching(/^pay\s+v2\s+deployed only$/),
        ]);
      // hello: its one call, with the function's console output.
      const calls = page.getByRole('table', { name: 'Recent calls' });
      await calls.getByText('hello from anon').waitFor();
      expect(await calls.getByRole('row').nth(1).innerText()).toMatch(/file\s+200\s+[\d.]+ ms\s+hello from anon/);

      // The schedule: its last run, status and next run.
      const schedules = page.getByRole('table', { name: 'Schedules' });
      expect(await schedules.getByRole('row').nth(1).innerText()).toMatch(/nightly\s+\*\/10 \* \* \* \*\s+\S.*\s+ok\s+\S.*\s+1 · 0/);

      // Secrets: the name, never the value.
      const secrets = page.getByRole('list', { name: 'Secrets' });
      await secrets.getByText('PAY_KEY', { exact: true }).waitFor();
      expect(await page.content()).not.toContain('pk_live_do_not_show');
      await shot(page, 'functions');

      // pay: two versions, v2 live; its calls; a rollback to v1 made here serves v1.
      await fns.getByRole('button', { name: /^pay/ }).click();
      await calls.getByText('warn: v2 is new').first().waitFor();
      expect(await calls.getByRole('row').nth(1).innerText()).toMatch(/v2\s+201\s+[\d.]+ ms\s+warn: v2 is new/);
      const versions = page.getByRole('list', { name: 'Versions' });
      await versions.getByText('live', { exact: true }).waitFor();
      await versions.getByRole('button', { name: 'Make v1 live' }).click();
      const rolled = answerOf(page, '/api/v1/admin/functions/pay/rollback', 'POST');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Make v1 live' }).click();
      expect((await rolled).status()).toBe(200);
      await versions.getByRole('button', { name: 'Make v2 live' }).waitFor();
      expect((await s.app.inject({ method: 'GET', url: '/api/v1/functions/pay', headers: s.anon })).body).toBe('pay one');
      await fns.getByRole('button', { name: /^pay\s+v1/ }).waitFor();
      await shot(page, 'functions-rolled-back');

      // Set a secret here: the function reads it on its next call; unset it.
      const form = page.getByRole('form', { name: 'Set a secret' });
      await form.getByLabel('Name').fill('GREETING');
      await form.getByLabel('Value').fill('bonjour tout le monde');
      const set = answerOf(page, '/api/v1/admin/function-secrets/GREETING', 'PUT');
      await form.getByRole('button', { name: 'Set secret' }).click();
      expect((await set).status()).toBe(204);
      await secrets.getByText('GREETING', { exact: true }).waitFor();
      expect(await secrets.innerText()).not.toContain('bonjour');
      s.write('functions/greet.ts', `export default (_r: Request, ctx: any) => new Response(String(ctx.secrets.GREETING));`);
      expect((await s.app.inject({ method: 'GET', url: '/api/v1/functions/greet', headers: s.anon })).body).toBe('bonjour tout le monde');
      await secrets.getByRole('button', { name: 'Unset GREETING' }).click();
      const unset = answerOf(page, '/api/v1/admin/function-secrets/GREETING', 'DELETE');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Unset GREETING' }).click();
      expect((await unset).status()).toBe(204);
      await secrets.getByText('GREETING', { exact: true }).waitFor({ state: 'detached' });
      expect((await s.app.inject({ method: 'GET', url: '/api/v1/functions/greet', headers: s.anon })).body).toBe('undefined');
      w.expectClean();
    } finally {
      await context.close();
    }
  });
});
