import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebhookCreated, WebhookDelivery } from '@plinth/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { freePort } from '../../test/process.js';
import { signatureHeader } from './signature.js';

// docs/webhooks.md's two receivers (Node and Python), taken from the page itself so they cannot
// drift, run as real processes: a webhook of a real server delivers to each, each verifies the
// signature and prints the change; a forged, a stale and an unsigned request are refused with 401.

const DOC = readFileSync(fileURLToPath(new URL('../../../../docs/webhooks.md', import.meta.url)), 'utf8');
const section = DOC.slice(DOC.indexOf('## Verifying the signature'), DOC.indexOf('## Order, retries, failure'));
const block = (lang: string) => {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  if (!m) throw new Error(`docs/webhooks.md has no ${lang} receiver`);
  return m[1];
};

let t: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'plinth-webhook-docs-'));
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const res = await t.sql('create table notes (id int primary key, title text not null)');
  expect(res.statusCode, res.body).toBe(200);
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a receiver from the page and resolves once it accepts connections. */
async function run(command: string, file: string, source: string, env: Record<string, string>) {
  writeFileSync(join(dir, file), source);
  const proc = spawn(command, [join(dir, file)], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  proc.stdout?.on('data', (d) => {
    out += d;
  });
  proc.stderr?.on('data', (d) => {
    out += d;
  });
  const url = `http://127.0.0.1:${env.PORT}`;
  await expect
    .poll(async () => {
      try {
        return (await fetch(url, { method: 'POST', body: '{}' })).status;
      } catch {
        return 0;
      }
    })
    .toBe(401);
  return { url, output: () => out };
}

describe("docs/webhooks.md's receivers", () => {
  it.each([
    ['node', 'receiver.mjs', 'js'],
    ['python3', 'receiver.py', 'python'],
  ])('%s: verifies real deliveries, refuses forged ones', async (command, file, lang) => {
    const port = await freePort();
    const made = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: t.as.service,
        payload: { name: `docs ${lang}`, table: 'notes', url: `http://127.0.0.1:${port}/` },
      })
    ).json() as WebhookCreated;
    const receiver = await run(command, file, block(lang), { PORT: String(port), PLINTH_WEBHOOK_SECRET: made.secret });

    const id = lang === 'js' ? 1 : 2;
    await t.app.inject({ method: 'POST', url: '/api/v1/db/notes', headers: t.as.service, payload: { id, title: `from ${lang}` } });
    await expect
      .poll(() => {
        t.webhooks.kick();
        return receiver.output();
      })
      .toMatch(new RegExp(`insert notes \\d+ \\{"id": ?${id}, ?"title": ?"from ${lang}"\\}`));
    // Recorded once the sender has the answer (a moment after the receiver printed the change).
    const newest = async () =>
      (
        (
          await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${made.id}/deliveries`, headers: t.as.service })
        ).json() as WebhookDelivery[]
      )[0];
    await expect.poll(async () => (await newest())?.status).toBe('sent');
    expect(await newest()).toMatchObject({ status: 'sent', response_status: 200, response: 'ok' });

    // Forged: signed with another secret; stale: signed right but ten minutes old; unsigned.
    const body = '{"type":"insert","table":"notes","seq":1,"record":{"id":9},"old_record":null,"commit_time":"2026-01-01T00:00:00.000Z"}';
    const now = Math.floor(Date.now() / 1000);
    for (const signature of [
      signatureHeader(['whsec_not-the-secret'], now, body),
      signatureHeader([made.secret], now - 600, body),
      signatureHeader([made.secret], now, `${body} `),
      '',
    ]) {
      const res = await fetch(receiver.url, { method: 'POST', headers: { 'plinth-signature': signature }, body });
      expect(res.status, signature).toBe(401);
    }
    // Signed by the secret, with a second v1 of an old one (a rotation): accepted.
    const ok = await fetch(receiver.url, {
      method: 'POST',
      headers: { 'plinth-signature': signatureHeader(['whsec_old', made.secret], now, body) },
      body,
    });
    expect(ok.status).toBe(200);
    expect(receiver.output()).not.toMatch(/Traceback|Error/);
  });
});
